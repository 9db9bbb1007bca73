"""The note a finding carries when its length comes from a parameter annotated only with classes of
the package that the engine cannot show to count an int (`lint_rules/engine/flow/receiver_notes.py`;
real code: rwkv-fla 0.7, whose `Cache` derives from one of two classes by the transformers release
and whose counter starts at its public constructor's argument). The note names each class as `int-length-classes`
takes it, and declaring what it names silences the finding. Notes change no finding: each case
below is reported with or without one.

Must have no note: a parameter that may hold a class of transformers or of another package, one the
function binds again, or one annotated with a class of the package shown to count a tensor."""

from __future__ import annotations

from pathlib import Path

import pytest

from lint_rules.checking import check_path
from lint_rules.rules import own_classes_note
from lint_rules.settings import Settings
from tests import package_files

COUNTER_CACHE = """\
    from transformers.cache_utils import Cache as HFCacheBase


    class Cache(HFCacheBase):
        def __init__(self, seen_tokens: int = 0):
            super().__init__()
            self._seen_tokens = seen_tokens  # a public constructor's argument: any caller's value

        def update(self, state=None, layer_idx: int = 0, offset: int = 1):
            self._seen_tokens += offset
            return state

        def get_seq_length(self, layer_idx: int = 0) -> int:
            return self._seen_tokens
    """

CHOSEN_AT_IMPORT = """\
    import transformers
    from transformers.cache_utils import Cache as HFCacheBase


    class Counting(HFCacheBase):
        def __init__(self, seen_tokens: int = 0):
            super().__init__()
            self._seen_tokens = seen_tokens  # a public constructor's argument

        def update(self, state=None, offset: int = 1):
            self._seen_tokens += offset
            return state

        def get_seq_length(self, layer_idx: int = 0) -> int:
            return self._seen_tokens


    class Normalizing(Counting):
        def update(self, state=None, offset: int = 1):
            self._seen_tokens += int(offset)
            return state


    if transformers.__version__ > "4.53.3":
        class Cache(Normalizing):
            pass
    else:
        class Cache(Counting):
            pass
    """

LAYER = """\
    from __future__ import annotations

    from typing import TYPE_CHECKING, Optional

    import torch

    if TYPE_CHECKING:
        from {package}.cache_utils import Cache


    def attend(hidden: torch.Tensor, past_key_values: {annotation} = None):
        {prelude}offset = past_key_values.get_seq_length()
        return hidden[:, offset:]
    """


def layer(annotation: str = "Optional[Cache]", prelude: str = "", package: str = "pkg") -> str:
    return LAYER.format(annotation=annotation, prelude=prelude, package=package)


def messages(tmp_path: Path, modules: dict[str, str], settings: Settings = Settings()) -> list[str]:
    package = package_files.write_package(tmp_path, modules)
    checked = check_path(str(package / "layer.py"), settings)
    assert not checked.error, checked.error
    return [finding.message for finding in checked.findings]


NOTED = {
    "a-counter-fed-by-a-public-method": ({"cache_utils": COUNTER_CACHE, "layer": layer()}, ["pkg.cache_utils.Cache"]),
    "a-class-chosen-at-import-time": ({"cache_utils": CHOSEN_AT_IMPORT, "layer": layer()}, ["pkg.cache_utils.Cache"]),
    "re-exported-by-the-package": (
        {
            "cache_utils": COUNTER_CACHE,
            "__init__": "from .cache_utils import Cache\n",
            "layer": layer().replace("from pkg.cache_utils import Cache", "from pkg import Cache"),
        },
        ["pkg.cache_utils.Cache"],
    ),
    "a-class-of-the-same-module": (
        {
            "layer": layer().replace("    if TYPE_CHECKING:\n        from pkg.cache_utils import Cache\n", "")
            + COUNTER_CACHE
        },
        ["pkg.layer.Cache"],
    ),
    "two-own-classes": (
        {
            "cache_utils": COUNTER_CACHE + "\n\n    class Other(Cache):\n        pass\n",
            "layer": layer("Cache | Other | None").replace("import Cache", "import Cache, Other"),
        },
        ["pkg.cache_utils.Cache", "pkg.cache_utils.Other"],
    ),
}


@pytest.mark.parametrize(("modules", "classes"), NOTED.values(), ids=NOTED.keys())
def test_the_note_names_the_packages_own_classes(modules: dict[str, str], classes: list[str], tmp_path: Path) -> None:
    [message] = messages(tmp_path, modules)
    assert message.endswith(f" [{own_classes_note(classes)}]")


@pytest.mark.parametrize(("modules", "classes"), NOTED.values(), ids=NOTED.keys())
def test_declaring_what_the_note_names_silences_the_finding(
    modules: dict[str, str], classes: list[str], tmp_path: Path
) -> None:
    assert messages(tmp_path, modules, Settings(int_length_classes=tuple(classes))) == []


WITHOUT_THE_NOTE = {
    "a-transformers-cache": {"layer": layer("Optional[Cache]", package="transformers")},
    "an-own-class-or-a-transformers-one": {
        "cache_utils": COUNTER_CACHE,
        "layer": layer("Cache | StaticCache | None").replace(
            "import Cache", "import Cache\n        from transformers import StaticCache"
        ),
    },
    "the-parameter-bound-again": {
        "cache_utils": COUNTER_CACHE,
        "layer": layer(prelude="past_key_values = past_key_values.parent\n        "),
    },
    "an-own-class-shown-to-count-a-tensor": {
        "cache_utils": "from transformers import StaticCache\n\n\nclass Cache(StaticCache):\n    pass\n",
        "layer": layer(),
    },
    "unannotated": {"cache_utils": COUNTER_CACHE, "layer": layer().replace(": Optional[Cache] = None", "=None")},
}


@pytest.mark.parametrize("modules", WITHOUT_THE_NOTE.values(), ids=WITHOUT_THE_NOTE.keys())
def test_twin_no_note_where_the_value_may_be_another_class(modules: dict[str, str], tmp_path: Path) -> None:
    [message] = messages(tmp_path, modules)
    assert "int-length-classes" not in message
