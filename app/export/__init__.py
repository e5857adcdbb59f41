"""Views of model scripts: the script tab, the dynamic_shapes editor, the guards panel."""
