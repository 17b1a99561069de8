"""The replay-tui app: one :class:`~replay_tui.ui.screens.run.ReplayScreen`
over a run, the command palette, and keys typed into prompts before they
are up. Layout lives in ``app.tcss``; what the run shows, and its keys, are
the screen's and its widgets'."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any

from textual import events
from textual.app import App, SystemCommand
from textual.screen import Screen

from replay_tui.engine.replay import Replay
from replay_tui.ui.commands import ReplayCommands
from replay_tui.ui.features.run.controller import COMPARE_FINISHED
from replay_tui.ui.keys import KEYS, palette_keys
from replay_tui.ui.messages import Progress
from replay_tui.ui.screens.prompts import PromptScreen
from replay_tui.ui.screens.run import ReplayScreen

__all__ = ["COMPARE_FINISHED", "KEYS", "Progress", "ReplayApp", "ReplayScreen"]


class _Executor(ThreadPoolExecutor):
    """The executor of the app's thread workers. At exit it does not wait for
    its threads: one may be inside user rules that never return, and waiting
    would leave the terminal hanging (``open_app`` then ends the process)."""

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        super().shutdown(wait=False, cancel_futures=True)


class ReplayApp(App[int]):
    """Step through one run. Make it with :func:`replay_tui.ui.launch.make_app`."""

    CSS_PATH = "app.tcss"
    COMMANDS = {ReplayCommands}
    TITLE = "replay-tui"
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]

    def __init__(self, main: ReplayScreen) -> None:
        super().__init__()
        #: The run on screen (its state and workers live there).
        self.main = main
        #: Keys typed before an open prompt's input had focus (see on_key).
        self._typed_ahead: list[str] | None = None

    @property
    def replay(self) -> Replay:
        """The replay shown (the CLI closes it when the app exits)."""
        return self.main.replay

    @property
    def b(self) -> Replay | None:
        """Compare mode's other side, if any (closed with the app too)."""
        return self.main.compare.b

    def on_mount(self) -> None:
        # Thread workers run on the loop's default executor; see _Executor.
        asyncio.get_running_loop().set_default_executor(
            _Executor(thread_name_prefix="replay-tui-worker")
        )

    def get_default_screen(self) -> Screen[Any]:
        return self.main

    def push_prompt(self, screen: PromptScreen[Any], done: Callable[[Any], None]) -> None:
        """Open a prompt; the keys typed before its input has focus are its."""
        self._typed_ahead = screen.typed

        def answered(result: Any) -> None:
            self._typed_ahead = None
            done(result)

        self.push_screen(screen, answered)

    async def on_event(self, event: events.Event) -> None:
        if isinstance(
            event, events.Key | events.MouseDown | events.MouseScrollDown | events.MouseScrollUp
        ):
            self.main.session.person_acts()  # work behind the pass waits
        await super().on_event(event)

    def on_key(self, event: events.Key) -> None:
        """Keys typed in the same burst as the key that opens a prompt
        (``:12`` Enter, as fast as a terminal sends them) reach the app, not
        the prompt's input, which was not up yet when they were sent: they
        are the start of the answer, not keys to run here."""
        typed = self._typed_ahead
        if typed is None:
            return
        if event.key == "enter":
            char = "\n"
        elif event.is_printable and event.character:
            char = event.character
        else:
            return
        event.stop()
        screen = self.screen
        if isinstance(screen, PromptScreen):
            screen.type_ahead(char)
        else:
            typed.append(char)  # the prompt takes them when it is up

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        # bookmarks first: an empty palette lists them at the top, not below
        # every key's command
        yield from self.main.bookmark_commands()
        for key in palette_keys():
            run = partial(self.run_action, key.action, self.main)
            yield SystemCommand(key.description, f"key: {key.shown}", run)
        yield from super().get_system_commands(screen)
