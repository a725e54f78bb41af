"""Unicode's confusable skeletons (UTS #39) and default-ignorable code points, from shipped data.

The data (``shared/data/confusables.json``) is generated from ICU by ``scripts/make_confusables.py``
and names the ICU and Unicode versions it came from (:data:`ICU_VERSION`, :data:`UNICODE_VERSION`).
Shipping it instead of calling ICU keeps PyICU, which compiles against ICU's headers for minutes,
out of the install; ``tests/test_confusables.py`` checks it against ICU where PyICU is installed.

NFD here is Python's :mod:`unicodedata` (its Unicode version may be older than the data's): a
character it does not know is unassigned to it, and :func:`shared.names.display_name` refuses those
before any skeleton is taken.
"""

from __future__ import annotations

import json
import unicodedata
from importlib import resources

_DATA = json.loads(resources.files("shared").joinpath("data", "confusables.json").read_text(encoding="utf-8"))
ICU_VERSION: str = _DATA["icu_version"]
UNICODE_VERSION: str = _DATA["unicode_version"]


def _text(hexes: str) -> str:
    return "".join(chr(int(h, 16)) for h in hexes.split())


_SKELETONS: dict[str, str] = {_text(k): _text(v) for k, v in _DATA["skeletons"].items()}
_IGNORABLE: frozenset[str] = frozenset(
    chr(cp) for first, last in _DATA["default_ignorable"] for cp in range(int(first, 16), int(last, 16) + 1))
del _DATA


def skeleton(text: str) -> str:
    """UTS #39's skeleton of ``text`` as ICU's SpoofChecker computes it: NFD, each code point replaced
    by its prototype, NFD again. Two strings that look alike to a reader share it (``аnn``, Cyrillic а,
    and ``ann``; ``rn`` and ``m``); it keeps case and accents apart."""
    mapped = "".join(_SKELETONS.get(ch, ch) for ch in unicodedata.normalize("NFD", text))
    return unicodedata.normalize("NFD", mapped)


def default_ignorable(ch: str) -> bool:
    """Whether ``ch`` has Unicode's Default_Ignorable_Code_Point property: a character a renderer may
    show as nothing at all (zero-width space and joiners, variation selectors, Hangul fillers)."""
    return ch in _IGNORABLE
