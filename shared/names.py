"""Names people see, and when two of them are the same name: one rule for accounts and casual players.

A name shown to other racers must not pass for another: ``аnn`` (Cyrillic а), ``ａnn`` (full width),
``ann`` with a zero-width space, a NUL byte or a combining accent are all ``ann`` to a reader. So:

- :func:`display_name` is the name as kept and shown: NFKC-normalised (full-width and other
  compatibility forms become plain ones), white space at the ends removed and runs of it inside
  made one space. A name holding a character nobody can see (control and format characters such as
  NUL or a zero-width space, Unicode's default-ignorable code points, line separators, unassigned or
  private-use code points) or a combining mark with no letter under it is refused (``bad_name``).
- :func:`name_key` is what two names that look alike share: the confusable *skeleton* of Unicode
  Technical Standard #39 (as ICU's SpoofChecker computes it from Unicode's confusables data, shipped
  in ``shared/confusables.py``: Cyrillic а and Latin a, 0 and O, I, 1 and l, m and rn have one
  skeleton), taken again after case folding
  (case is no difference either), with combining marks left out (``anń`` is ``ann``). Names are
  compared, and indexed in Redis, by this key only.
- :func:`account_name` is the stricter rule of account names (letters, digits, ``_`` and ``-``).

Pure: no I/O. Every process computes the same key for the same text as long as they run the same
confusables data and Python's Unicode (new data may move a skeleton: a start under another
:data:`LOOK_VERSION` rebuilds the account index, see ``server/store/accounts.py``).
"""

from __future__ import annotations

import re
import unicodedata

from . import confusables
from .protocol import ACCOUNT_NAME_PATTERN, MAX_NAME_LENGTH, CodedError, ErrorCode

LOOK_VERSION = (f"icu {confusables.ICU_VERSION}, unicode {confusables.UNICODE_VERSION}/{unicodedata.unidata_version},"
                " key 1")
"""What :func:`name_key` depends on besides the name: two processes with the same LOOK_VERSION give every
name the same key (the last number counts changes to :func:`name_key` itself). The account index says
which version it was built by (server/store/accounts.py). ICU's and Unicode's versions are the data's
(shared/confusables.py), which gives every name the key that ICU of that version gives it."""

_ACCOUNT = re.compile(ACCOUNT_NAME_PATTERN)
_UNSEEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
"""Controls, format characters (zero-width, bidi), surrogates, private use, unassigned, line breaks."""
MAX_MARKS = 2
"""Combining marks one letter may carry (a letter under a tower of marks hides the letters beside it)."""


class NameRefused(CodedError, ValueError):
    """A name that cannot be used (``bad_name``); the message says why in the player's words."""

    def __init__(self, message: str) -> None:
        super().__init__(ErrorCode.BAD_NAME, message)


def _described(ch: str) -> str:
    return f"U+{ord(ch):04X} {unicodedata.name(ch, 'an unnamed character')}"


def display_name(text: str) -> str:
    """``text`` as a name to show; raises :class:`NameRefused` for one with an unseen character."""
    normal = unicodedata.normalize("NFKC", text)
    for ch in normal:
        if unicodedata.category(ch) in _UNSEEN_CATEGORIES or confusables.default_ignorable(ch):
            raise NameRefused(f"the name holds a character that cannot be seen ({_described(ch)}): "
                              "use only letters, digits, spaces and signs that show")
    name = " ".join(normal.split())
    if not name:
        raise NameRefused("a name needs at least one letter, digit or sign that shows")
    marks = 0
    for i, ch in enumerate(name):
        if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Mc"):
            marks += 1
            if i == 0 or name[i - 1] == " ":
                raise NameRefused(f"the name has a mark on no letter ({_described(ch)}): "
                                  "put accents on letters only")
            if marks > MAX_MARKS:
                raise NameRefused(f"a letter of the name carries more than {MAX_MARKS} accents or marks")
        else:
            marks = 0
    if len(name) > MAX_NAME_LENGTH:
        raise NameRefused(f"the name is longer than {MAX_NAME_LENGTH} characters once written plainly")
    return name


def name_key(name: str) -> str:
    """What every name that looks like ``name`` maps to (compare and index names by this alone).

    The TR39 skeleton does not fold case (it keeps ``A`` and ``a`` apart), and case folding can make
    a letter with another skeleton, hence skeleton, fold, skeleton: ``BiII``, ``bill`` and ``ВILL``
    share one key. The skeleton is in NFD, so dropping combining marks leaves the base letters.
    """
    folded = confusables.skeleton(confusables.skeleton(display_name(name)).casefold())
    return "".join(ch for ch in folded if not unicodedata.combining(ch))


def account_name(text: str) -> str:
    """``text`` as an account's name: 2 to 24 ASCII letters, digits, ``_`` or ``-`` starting with a
    letter or digit (any other character would be a look-alike risk in keys and addresses);
    raises :class:`NameRefused`."""
    name = display_name(text)
    if not _ACCOUNT.fullmatch(name):
        raise NameRefused(ErrorCode.BAD_NAME.explanation)
    return name
