"""The command palette's commands, bookmarks first."""

from __future__ import annotations

from textual.command import DiscoveryHit, Hits
from textual.system_commands import SystemCommandsProvider


class ReplayCommands(SystemCommandsProvider):
    """Textual's system commands provider lists an empty palette sorted by
    title, which puts ``◆ seq 3: note`` below every key's command: the app
    gives its commands in the order it wants (bookmarks, then keys, then
    Textual's own), and they are listed so."""

    async def discover(self) -> Hits:
        for name, help_text, callback, discover in self.app.get_system_commands(self.screen):
            if discover:
                yield DiscoveryHit(name, callback, help=help_text)
