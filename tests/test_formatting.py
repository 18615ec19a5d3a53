"""Number formatting: rounding never shows 0 or 1 for values that are not."""

from __future__ import annotations

import math

import pytest

from reportgen.formatting import (
    fmt_change,
    fmt_count,
    fmt_diff,
    fmt_interval,
    fmt_listed,
    fmt_num,
    fmt_p,
    fmt_pct,
    fmt_share,
    interval_side,
    one_line,
    p_clause,
)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.7314, "0.731"),
        (0.0, "0.000"),
        (1.0, "1.000"),
        (0.0004, "< 0.001"),
        (0.9996, "> 0.999"),
        (None, "n/a"),
        (math.nan, "n/a"),
        (12.5, "12.500"),
    ],
)
def test_fmt_num(value, text):
    assert fmt_num(value) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.042, "+0.042"),
        (-0.01, "\u22120.010"),
        (0.0, "0.000"),
        (0.0002, "+0.0002"),  # too small for 3 decimals: its first significant digit
        (-0.0002, "\u22120.0002"),
        (0.00025, "+0.0003"),
        (3e-9, "+0.000000003"),
        (None, "n/a"),
    ],
)
def test_fmt_diff(value, text):
    assert fmt_diff(value) == text


@pytest.mark.parametrize(
    ("share", "text"),
    [
        (0.17, "+17%"),
        (-0.4, "\u221240%"),  # the report's minus sign, as in every difference
        (0.0, "0%"),
        (1e-15, "0%"),  # float noise of two equal budgets
        (0.005, "+0.5%"),  # rounds to a whole 0%: its first significant digit instead
        (-0.0004, "\u22120.04%"),
        (0.0051, "+1%"),
    ],
)
def test_fmt_change(share, text):
    assert fmt_change(share) == text


def test_fmt_interval():
    assert fmt_interval(-0.012, 0.034) == "[\u22120.012, +0.034]"
    assert fmt_interval(0.1234, 0.5, digits=1) == "[+0.1, +0.5]"
    assert fmt_interval(float("nan"), float("nan")) == "none"  # one question: no interval


def test_an_interval_of_small_bounds_gives_both_the_decimals_the_smaller_needs():
    """[-0.00062, +0.00026] read [-0.001, +0.0003]: the lower bound 60% larger than the gate
    line and the JSON beside it, the upper to its first digit."""
    assert fmt_interval(-0.00062, 0.00026) == "[\u22120.0006, +0.0003]"
    assert fmt_interval(1.216e-05, 0.0007335) == "[+0.00001, +0.00073]"
    assert fmt_interval(-0.0004, 0.2) == "[\u22120.0004, +0.2000]"
    assert fmt_interval(0.0, 0.00004) == "[0.00000, +0.00004]"
    assert fmt_interval(-0.012, 0.0005) == "[\u22120.012, +0.001]"  # both read at 3 decimals


@pytest.mark.parametrize(
    ("p", "text", "clause"),
    [
        (0.0004, "< 0.001", "p < 0.001"),
        (0.023, "0.023", "p = 0.023"),
        (1.0, "1.000", "p = 1.000"),
        (0.9995, "> 0.999", "p > 0.999"),
        (None, "n/a", "p = n/a"),
    ],
)
def test_fmt_p(p, text, clause):
    assert fmt_p(p) == text
    assert p_clause(p) == clause


@pytest.mark.parametrize(
    ("p", "bar", "text"),
    [
        (0.02539, 0.025, "0.0254"),  # 0.025 would read as the bar, which does not reject
        (0.0249, 0.025, "0.0249"),  # 0.025 would hide that it rejects
        (0.031, 0.025, "0.031"),
        (0.0499, 0.05, "0.0499"),
        (0.05, 0.05, "0.050"),  # on the bar: as written
        (0.0004, 0.05, "< 0.001"),
        (0.0005, 0.0001, "0.0005"),  # "< 0.001" would not say which side of 0.0001
    ],
)
def test_fmt_p_keeps_its_side_of_the_bar(p, bar, text):
    assert fmt_p(p, bar) == text


def test_fmt_pct():
    assert fmt_pct(1 - 0.05 / 3) == "98.33%"  # the per-candidate level of three candidates
    assert fmt_pct(0.99999) == "99.999%"  # not rounded up to 100%
    assert fmt_pct(0.95) == "95%"
    assert fmt_pct(0.995) == "99.5%"


def test_interval_side_colours_only_intervals_that_exclude_zero():
    assert interval_side(0.01, 0.2) == "up"
    assert interval_side(-0.2, -0.01) == "down"
    assert interval_side(0.0, 0.2) == "none"  # touching zero is not excluding it
    assert interval_side(-0.1, 0.1) == "none"


def test_fmt_listed_names_the_first_and_counts_the_rest():
    assert fmt_listed(["q1", "q2", "q3"], 2) == "q1, q2 and 1 more"
    assert fmt_listed(["q1", "q2"], 2) == "q1, q2"
    assert fmt_listed(["q1"], 5) == "q1"
    assert fmt_listed([], 5) == ""


def test_fmt_share_never_reads_none_or_all_when_it_is_neither():
    assert [fmt_share(s) for s in (0, 1 / 300, 0.5, 299 / 300, 1)] == [
        "0%",
        "under 1%",
        "50%",
        "over 99%",
        "100%",
    ]


def test_fmt_diff_reads_float_noise_as_zero():
    """Two runs with the same mean 0.45 give a mean of B - A of -5.55e-18 (float rounding of
    each question's difference): it reads 0.000, while a real small difference keeps its digit."""
    assert fmt_diff(-5.551115123125783e-18) == "0.000"
    assert fmt_diff(2e-4) == "+0.0002" and fmt_diff(-3e-9) == "\u22120.000000003"


def test_fmt_count_is_singular_for_one():
    assert [fmt_count(n, "question") for n in (1, 2, 1_000_000)] == [
        "1 question",
        "2 questions",
        "1,000,000 questions",
    ]


def test_one_line_writes_every_line_break_and_control_as_its_escape():
    text = "a\nb\r\x0b\x1b[2K\x1c\x85\u2028\u2029\udcff\t\x7f"
    assert one_line(text) == "a\\nb\\r\\x0b\\x1b[2K\\x1c\\x85\\u2028\\u2029\\udcff\\t\\x7f"
    assert len(one_line(text).splitlines()) == 1
    assert one_line("précis \u202e ünïcode") == "précis \u202e ünïcode"  # printable, as it is
