"""What a file read by the window opens as: the tab its format's registry entry names (`Format.opens_as`,
core/formats/registry.py), and the panels its model adds beside its graph. The main window reads a file through the
registry (app/graph/loader.py) and asks here for its tab, so a new format's tab is one branch here."""
from __future__ import annotations

from typing import TYPE_CHECKING

from pt2_viewer.app.document.tab import DocumentTab, TextTab
from pt2_viewer.core.formats.registry import Format, Opens
from pt2_viewer.core.model.program import Archive
from pt2_viewer.core.platform.trust import TrustStore

if TYPE_CHECKING:  # imported where used: opening a .pt2 needs neither the AOTInductor tab nor a .pte's panel
    from pt2_viewer.app.document.widget import DocumentWidget
    from pt2_viewer.app.panels.panel import Panel


def archive_tab(fmt: Format, path: str, archive: Archive, program: DocumentWidget | None, *, interactive: bool,
                trust: TrustStore) -> DocumentTab:
    """The tab of `archive`, read from `path` as `fmt`: an AOTInductor package's tab (its compiled models, and the
    graph of its program, `program`, beside them when it holds one); else the program's document `program`; an
    archive of neither (no program to draw) shows its text."""
    if fmt.opens_as is Opens.AOTI_PACKAGE:
        from pt2_viewer.app.deploy.aoti_tab import AotiTab  # deferred: it brings the job driver and pygments

        return AotiTab(path, archive, program=program, interactive=interactive, trust=trust)
    if program is not None:
        return program
    from pt2_viewer.core.pt2.info import aoti_text  # deferred: an archive with no program is rare

    return TextTab(path, aoti_text(archive))


def extra_panels(archive: Archive) -> dict[str, Panel]:
    """The panels beside a program's graph: a `.pte`'s ExecuTorch panel (its module loads only for a `.pte`)."""
    if archive.executorch is None:
        return {}
    from pt2_viewer.app.deploy.pte_panel import pte_panels

    return pte_panels(archive)
