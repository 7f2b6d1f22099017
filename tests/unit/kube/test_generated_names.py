"""The generateName rule shared by the committer and the resourceclaim controller (apimachinery's SimpleNameGenerator)."""

from __future__ import annotations

import re

from services.kube.generated_names import GENERATE_NAME_ALPHABET, generate_name, random_suffix

SUFFIX = f"[{GENERATE_NAME_ALPHABET}]{{5}}"


def test_prefix_and_five_characters_without_vowels_or_look_alikes() -> None:
    names = {generate_name("web-0-gpu-") for _ in range(50)}
    assert len(names) > 1
    for name in names:
        assert re.fullmatch(f"web-0-gpu-{SUFFIX}", name), name
    assert not set(GENERATE_NAME_ALPHABET) & set("aeiou013")


def test_a_long_prefix_is_cut_so_the_name_fits_63_characters() -> None:
    name = generate_name("p" * 70)
    assert len(name) == 63 and re.fullmatch(f"p{{58}}{SUFFIX}", name), name


def test_random_suffix_length() -> None:
    assert re.fullmatch(f"[{GENERATE_NAME_ALPHABET}]{{8}}", random_suffix(8))
