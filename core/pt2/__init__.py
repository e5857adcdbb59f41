"""Reading `.pt2` archives: the zip and its JSON members, torch's serialized schema into the program model. No torch, no
pickle."""
