"""The footer: whole keys only, most needed first."""

from __future__ import annotations

from textual.widgets import Footer
from textual.widgets._footer import FooterKey


class FittedFooter(Footer):
    """Textual's footer cuts the last key that does not fit ("spa" at 80
    columns). This one leaves out whole keys from the first that does not
    fit on: the bindings come most needed first, and ``?`` lists them all."""

    async def recompose(self) -> None:
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
