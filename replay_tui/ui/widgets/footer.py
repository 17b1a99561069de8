"""The footer: whole keys only, most needed first."""

from __future__ import annotations

from typing import Any

from textual.screen import Screen
from textual.widgets import Footer
from textual.widgets._footer import FooterKey


class FittedFooter(Footer):
    """Textual's footer cuts the last key that does not fit ("spa" at 80
    columns). This one leaves out whole keys from the first that does not
    fit on: the bindings come most needed first, and ``?`` lists them all."""

    #: The keys last composed (key, action, description, enabled, tooltip).
    _shown: tuple[tuple[object, ...], ...] | None = None

    def bindings_changed(self, screen: Screen[Any]) -> None:
        """Compose the keys again only if they changed: a prompt closing or
        the focus moving between panes with the same keys made Textual's
        footer build its keys anew, three times a ``:`` jump (a fifth of it)."""
        same = self.is_attached and screen is self.screen and self._shown is not None
        if same and self._keys(screen) == self._shown:
            return
        super().bindings_changed(screen)

    def _keys(self, screen: Screen[Any]) -> tuple[tuple[object, ...], ...]:
        return tuple(
            (b.key, b.action, b.description, enabled, tooltip)
            for (_, b, enabled, tooltip) in screen.active_bindings.values()
            if b.show
        )

    async def recompose(self) -> None:
        self._shown = self._keys(self.screen)
        await super().recompose()
        self._fit()

    def on_resize(self) -> None:
        self._fit()

    def _fit(self) -> None:
        keys = list(self.query(FooterKey))
        room = self.size.width - sum(
            _width(self, key) for key in keys if key.has_class("-command-palette")
        )
        used = 0
        fitting = True
        for key in keys:
            if key.has_class("-command-palette"):
                continue
            width = _width(self, key)
            fitting = fitting and used + width <= room
            key.display = fitting
            used += width if fitting else 0


def _width(footer: Footer, key: FooterKey) -> int:
    """Columns ``key`` takes, shown or not."""
    size = footer.size
    return key.get_content_width(size, size) + key.styles.gutter.width + key.styles.margin.width
