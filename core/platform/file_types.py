"""A kind of file as the desktop knows it (a shared-mime-info type), and the MIME package that declares them.

The format registry (core/formats/registry.py) says which of the viewer's formats are desktop file types; this
module writes them as freedesktop.org's shared-mime-info wants them, so that `--install-desktop`
(core/platform/desktop.py) declares exactly the formats the viewer opens, and a new format is one entry there.
"""
from __future__ import annotations

import msgspec

GLOB_WEIGHT = 80  # above shared-mime-info's default 50: the extension wins over a container's magic (a .pt2 is a zip)
MAGIC_PRIORITY = 60


class DesktopFileType(msgspec.Struct, frozen=True):
    """One MIME type: its name, what a file manager calls it, the extensions it is saved under, the bytes it holds at
    an offset (matched whatever the file's name), and the type it is a kind of (a `.pt2` is a zip)."""

    mime_type: str
    comment: str
    acronym: str
    expanded_acronym: str
    extensions: tuple[str, ...]
    magic: tuple[tuple[int, bytes], ...] = ()
    sub_class_of: str = ""


def mime_package_xml(types: tuple[DesktopFileType, ...] | list[DesktopFileType], icon: str) -> str:
    """The shared-mime-info package declaring `types` (installed as `mime/packages/APP.xml`), each with `icon`."""
    from xml.sax.saxutils import escape, quoteattr  # here: only --install-desktop writes XML, not the window

    lines = ['<?xml version="1.0" encoding="UTF-8"?>',  # no double hyphen in a comment: XML forbids it
             "<!-- The file types PT2 Viewer opens, written by its install-desktop option from its format registry "
             "(core/formats/registry.py). A type that is a container's (a .pt2 is a zip) is its sub-class, and each "
             f"glob's weight {GLOB_WEIGHT} (above the default 50) makes the extension win over the container's "
             "magic. -->",
             '<mime-info xmlns="http://www.freedesktop.org/standards/shared-mime-info">']
    for t in types:
        lines.append(f"  <mime-type type={quoteattr(t.mime_type)}>")
        lines.append(f"    <comment>{escape(t.comment)}</comment>")
        lines.append(f"    <acronym>{escape(t.acronym)}</acronym>")
        lines.append(f"    <expanded-acronym>{escape(t.expanded_acronym)}</expanded-acronym>")
        if t.sub_class_of:
            lines.append(f"    <sub-class-of type={quoteattr(t.sub_class_of)}/>")
        if t.magic:
            lines.append(f'    <magic priority="{MAGIC_PRIORITY}">')
            lines += [f'      <match type="string" value={quoteattr(value.decode("ascii"))} offset="{offset}"/>'
                      for offset, value in t.magic]
            lines.append("    </magic>")
        lines += [f'    <glob pattern={quoteattr("*" + ext)} weight="{GLOB_WEIGHT}"/>' for ext in t.extensions]
        lines.append(f"    <icon name={quoteattr(icon)}/>")
        lines.append("  </mime-type>")
    lines.append("</mime-info>")
    return "\n".join(lines) + "\n"
