"""The one progress bar (cost_models.progress): shown on a terminal, silent when piped."""

from __future__ import annotations

import io

from rich.console import Console

from cost_models.progress import progress_bar


def test_a_terminal_sees_the_label_the_count_and_the_eta() -> None:
    term = Console(file=io.StringIO(), force_terminal=True, width=100)
    with progress_bar("annotate", eta=True, console=term) as bar:
        task = bar.add_task("annotate", total=4)
        bar.advance(task, 4)
    shown = term.file.getvalue()
    for text in ("annotate", "4/4", "ETA"):
        assert text in shown, text


def test_piped_output_gets_not_even_a_newline() -> None:
    piped = Console(file=io.StringIO())
    with progress_bar("collect", eta=True, console=piped) as bar:
        bar.advance(bar.add_task("collect", total=2))
    assert piped.file.getvalue() == ""
