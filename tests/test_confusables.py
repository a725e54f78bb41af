"""Names' look-alike data without PyICU (issue 35): the skeleton computed from the shipped data
(shared/confusables.py) is ICU's, and names work in an install that has no PyICU at all.

The comparisons with ICU run where PyICU is installed (``pip install -e '.[icu]'``) and of the ICU
version the data was generated from; elsewhere they are skipped, saying why.
"""

from __future__ import annotations

import importlib.util
import json
import random
import subprocess
import sys
import unicodedata
from pathlib import Path
from typing import Any, Iterator

import pytest

from shared import confusables
from shared.names import LOOK_VERSION, NameRefused, display_name, name_key

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "shared" / "data" / "confusables.json"


def _icu() -> Any:
    """PyICU of the data's ICU version, or a skip saying what is missing."""
    icu = pytest.importorskip("icu", reason="PyICU is not installed (pip install -e '.[icu]'; it builds against "
                                            "libicu-dev): the shipped data cannot be compared with ICU here")
    if icu.ICU_VERSION != confusables.ICU_VERSION:
        pytest.skip(f"PyICU runs ICU {icu.ICU_VERSION}, the data is from ICU {confusables.ICU_VERSION}: "
                    "regenerate it with scripts/make_confusables.py to compare")
    return icu


def _generator() -> Any:
    spec = importlib.util.spec_from_file_location("make_confusables", ROOT / "scripts" / "make_confusables.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _assigned() -> Iterator[str]:
    """Every code point Python's Unicode assigns (what a name may hold) but surrogates."""
    for cp in range(0x110000):
        ch = chr(cp)
        if unicodedata.category(ch) not in ("Cn", "Cs"):
            yield ch


def test_names_have_their_looks_without_pyicu() -> None:
    """PyICU compiles for minutes on a first install: the server must not need it."""
    code = ("import sys; sys.modules['icu'] = None\n"  # import icu now raises ImportError
            "from shared.names import LOOK_VERSION, name_key, display_name, NameRefused\n"
            "assert name_key('\\u0430nn') == name_key('ANN') == 'ann' and name_key('rnary') == name_key('mary')\n"
            "try:\n    display_name('a\\u200bnn')\nexcept NameRefused as e:\n    print(e.code.value)\n"
            "print(LOOK_VERSION)\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["bad_name", LOOK_VERSION]


def test_the_look_version_names_the_datas_icu_and_unicode() -> None:
    """The account index rebuilds when LOOK_VERSION changes: new data must change it."""
    assert LOOK_VERSION == (f"icu {confusables.ICU_VERSION}, unicode {confusables.UNICODE_VERSION}/"
                            f"{unicodedata.unidata_version}, key 1")
    assert confusables.UNICODE_VERSION in DATA.read_text()[:400]
    versions = f"ICU {confusables.ICU_VERSION}, Unicode {confusables.UNICODE_VERSION}"
    assert versions in " ".join((ROOT / "docs" / "protocol.md").read_text().split()), "the docs name the data's"


def test_the_shipped_data_is_what_the_generator_makes_from_icu() -> None:
    _icu()
    generator = _generator()
    assert generator.render(generator.build()) == DATA.read_text(encoding="utf-8")


def test_the_skeleton_of_every_code_point_is_icus() -> None:
    icu = _icu()
    spoof = icu.SpoofChecker()
    differ = [f"U+{ord(ch):04X}" for ch in _assigned() if confusables.skeleton(ch) != str(spoof.getSkeleton(0, ch))]
    assert differ == []


def test_default_ignorable_code_points_are_icus() -> None:
    icu = _icu()
    prop = icu.UProperty.DEFAULT_IGNORABLE_CODE_POINT
    differ = [f"U+{cp:04X}" for cp in range(0x110000)
              if confusables.default_ignorable(chr(cp)) != icu.Char.hasBinaryProperty(chr(cp), prop)]
    assert differ == []


NAMES = ["ann", "аnn", "ａnn", "ANN", "ánn", "ańn", "Zoë", "Zoe\u0308", "BiII", "ВILL", "rnary", "pаypаl",
         "b0b", "ǅemal", "ﬁnn", "Straße", "STRASSE", "ΑΝΝΑ", "Ωmega", "İlkay", "ıl", "Ǭ", "ḍ̇", "ậ",
         "Jürgen Müller", "Nguyễn Văn", "Łukasz", "Ørjan", "Ærø", "Đorđe", "Ħal", "東京", "ｶﾀｶﾅ", "한국어",
         "ㅎㅏㄴ", "हिन्दी", "العربية", "שָׁלוֹם", "ไทย", "Ⅻ", "℃", "№ 1", "x²", "ℌello", "𝐛𝐨𝐛", "ǈ", "ŉ"]
"""Names of many scripts and of the tricky kinds: look-alikes, decomposable letters, stacked marks in
both orders, ligatures, case that folds to more than one letter, compatibility forms."""


def _corpus() -> list[str]:
    """The names above and random ones built from the characters the data maps, their prototypes and
    combining marks (where the order of NFD, mapping and NFD again shows)."""
    skeletons = json.loads(DATA.read_text(encoding="utf-8"))["skeletons"]
    pieces = sorted({chr(int(h, 16)) for k, v in skeletons.items() for h in [k, *v.split()]})
    marks = [chr(cp) for cp in range(0x300, 0x370)] + ["\u0323", "\u0335", "\u0338", "\u05b0", "\u0e31"]
    pick = random.Random(35)
    made = ["".join(pick.choice(pieces if pick.random() < 0.7 else marks) for _ in range(pick.randint(1, 8)))
            for _ in range(20_000)]
    return NAMES + made


def test_name_keys_of_a_corpus_are_those_icu_gives() -> None:
    """The key as it was computed with ICU at run time (display name, skeleton, fold, skeleton, marks
    dropped) is the key now: no account's index entry moves."""
    icu = _icu()
    spoof = icu.SpoofChecker()

    def icu_skeleton(text: str) -> str:
        return str(spoof.getSkeleton(0, text))

    compared = 0
    for text in _corpus():
        assert confusables.skeleton(text) == icu_skeleton(text), ascii(text)
        try:
            name = display_name(text)
        except NameRefused:
            continue
        want = "".join(ch for ch in icu_skeleton(icu_skeleton(name).casefold()) if not unicodedata.combining(ch))
        assert name_key(text) == want, ascii(text)
        compared += 1
    assert compared > 5_000
