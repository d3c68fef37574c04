"""The collector itself: it finds every fenced block with its language and marker, and a broken
example fails (the docs tests would pass vacuously otherwise)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs.blocks import blocks, prepare, run

PAGE = '''# A page

```python
print("ok")
```

1. In a list:

    ```bash
    echo "$((1 + 1))"
    ```

<!-- docs-test: proxy -->
```python
import urllib.parse
print(urllib.parse.urlsplit("http://127.0.0.1:8787/v1").port)
```

```console
$ utilityguard serve --upstream http://127.0.0.1:8080/v1
```
'''


def _page(tmp_path: Path, text: str) -> Path:
    page = tmp_path / "page.md"
    page.write_text(text, encoding="utf-8")
    return page


def test_blocks_are_found_with_language_line_and_marker(tmp_path: Path) -> None:
    found = list(blocks(_page(tmp_path, PAGE)))
    assert [(b.lang, b.line, b.marker) for b in found] == [
        ("python", 3, None), ("bash", 9, None), ("python", 14, "proxy"), ("console", 19, None)]
    assert found[1].code == 'echo "$((1 + 1))"\n'  # the list's indentation is removed


def test_working_blocks_pass_and_addresses_are_substituted(tmp_path: Path) -> None:
    python, bash, proxied, _ = blocks(_page(tmp_path, PAGE))
    assert run(python, tmp_path / "a").stdout == "ok\n"
    assert run(bash, tmp_path / "b").stdout == "2\n"
    addresses = {"127.0.0.1:8787": "127.0.0.1:9999"}
    assert "9999" in prepare(proxied, addresses)
    assert run(proxied, tmp_path / "c", addresses=addresses).stdout == "9999\n"


@pytest.mark.parametrize("lang, code", [
    ("python", "assert 1 + 1 == 3, 'a broken example'"),
    ("python", "import a_module_that_does_not_exist"),
    ("bash", "false\necho 'the last command succeeds'"),  # set -e: the first failure counts
    ("bash", "utilityguard decide 'What is 2 + 2?' --p 2"),  # a bad value: exit 2
    ("bash", "utilityguard no-such-command"),
])
def test_a_broken_example_fails(tmp_path: Path, lang: str, code: str) -> None:
    (block,) = blocks(_page(tmp_path, f"```{lang}\n{code}\n```\n"))
    assert run(block, tmp_path / "run").returncode != 0


def test_the_shim_runs_this_checkout(tmp_path: Path) -> None:
    (block,) = blocks(_page(tmp_path, "```bash\nutilityguard --help\n```\n"))
    done = run(block, tmp_path / "run")
    assert done.returncode == 0 and "decide" in done.stdout


def test_console_blocks_are_not_run_and_unclosed_fences_are_errors(tmp_path: Path) -> None:
    *_, console = blocks(_page(tmp_path, PAGE))
    with pytest.raises(ValueError, match="not run"):
        run(console, tmp_path / "run")
    with pytest.raises(ValueError, match="never closed"):
        list(blocks(_page(tmp_path, "```python\nprint(1)\n")))
