"""Text as a person reads it: normalized (:mod:`guard.reading.normalize`), judged readable or not
(:mod:`guard.reading.readable`) and decoded (:mod:`guard.reading.decode`; the spellings of
:mod:`guard.reading.ciphers`), for pricing.

The lexicon of English words (``data/words.txt.gz``) is built by ``scripts/build_lexicon.py``
from SCOWL's word lists and the seed set's words; its card is ``data/README.md``.
"""

from guard.reading.decode import decoded, decoded_unreadable
from guard.reading.normalize import normalized
from guard.reading.readable import unreadable

__all__ = ["decoded", "decoded_unreadable", "normalized", "unreadable"]
