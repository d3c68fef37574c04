"""Build the readability lexicon ``guard/reading/data/words.txt.gz`` (see its README).

Sources: Debian's ``wamerican`` and ``wbritish`` word lists (SCOWL, Kevin Atkinson; a
permissive licence, reproduced in ``guard/reading/data/LICENSE-SCOWL.txt``), minus possessives,
lower-cased; plus every word of the seed set's questions (``cost_models/data/seed/items.jsonl``,
MIT). Run after ``apt-get install wamerican wbritish``::

    python scripts/build_lexicon.py

The output is deterministic (sorted words, gzip with mtime 0).
"""

from __future__ import annotations

import gzip
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DICTS = (Path("/usr/share/dict/american-english"), Path("/usr/share/dict/british-english"))
OUT = ROOT / "guard" / "reading" / "data" / "words.txt.gz"
WORD = re.compile(r"[A-Za-z]+")


def main() -> int:
    missing = [str(p) for p in DICTS if not p.exists()]
    if missing:
        print(f"missing {', '.join(missing)}: apt-get install wamerican wbritish",
              file=sys.stderr)
        return 2
    words: set[str] = set()
    for path in DICTS:
        for line in path.read_text(encoding="utf-8").splitlines():
            w = line.strip().lower()
            if w and not w.endswith("'s") and w.isascii() and w.isalpha():
                words.add(w)
    seed = ROOT / "cost_models" / "data" / "seed" / "items.jsonl"
    for line in seed.read_text(encoding="utf-8").splitlines():
        words.update(w.lower() for w in WORD.findall(json.loads(line)["question"]))
    data = "".join(w + "\n" for w in sorted(w for w in words if len(w) > 1)).encode()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with OUT.open("wb") as f, gzip.GzipFile(fileobj=f, mode="wb", mtime=0, filename="") as gz:
        gz.write(data)
    n = data.count(b"\n")
    print(f"{OUT.relative_to(ROOT)}: {n} words")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
