"""The evaluator of the program description's shape, stride and size expressions."""

import pytest

from sdfc._expr import Expr


@pytest.mark.parametrize(
    "text, values, expected",
    [
        ("N", {"N": 7}, 7),
        ("-2 + M", {"M": 10}, 8),
        ("-__a_I_range_0 + __a_I_range_1", {"__a_I_range_0": 1, "__a_I_range_1": 7}, 6),
        (
            "1 - __l_I_range_0 * __l_I_stride + __l_I_range_1 * __l_I_stride - __l_I_stride",
            {"__l_I_range_0": 0, "__l_I_range_1": 5, "__l_I_stride": 3},
            13,
        ),
        ("256 * int_ceil(8 * N, 256)", {"N": 55}, 512),
        ("int_floor(-7, 2)", {}, -4),
        ("int_ceil(-7, 2)", {}, -3),
        ("Mod(-7, 3)", {}, 2),
        ("-7 // 2 + -7 % 3", {}, -2),
        ("Min(N, 4) + Max(N, 4, 9)", {"N": 6}, 13),
        ("min(N, 2) + max(N, 1) + abs(-N) + Abs(N - 9)", {"N": 6}, 17),
        ("N**2 * (M - 1)", {"N": 3, "M": 2}, 9),
        ("12 / N", {"N": 4}, 3),
        ("(N << 2) | 1", {"N": 3}, 13),
        ("N if N > 3 and M <= 2 else M", {"N": 5, "M": 2}, 5),
        ("floor(N) + ceiling(N) + int(N)", {"N": 2}, 6),
    ],
)
def test_evaluates_like_sdfc(text, values, expected):
    assert Expr(text).evaluate(values) == expected


@pytest.mark.parametrize(
    "text, values",
    [
        ("N", {}),  # a symbol without a value
        ("N * 4", {"N": 2**62}),  # overflows 64 bits
        ("2**64", {}),
        ("N // 0", {"N": 1}),
        ("int_ceil(N, 0)", {"N": 1}),
        ("7 / 2", {}),  # / must be exact
        ("N ** -1", {"N": 2}),
        ("Min()", {}),
    ],
)
def test_no_value(text, values):
    assert Expr(text).evaluate(values) is None


def test_what_an_expression_knows():
    e = Expr("-2 + N * M")
    assert e.symbols == {"N", "M"} and e.bare_symbol is None and e.constant is None
    assert Expr("N").bare_symbol == "N"
    assert Expr("4 * 8").constant == 32 and Expr("4 * 8").symbols == frozenset()
    assert Expr("Max(N, 2)").symbols == {"N"}  # function names are not symbols


@pytest.mark.parametrize("text", ["N.real", "f(N)", "N[0]", "'a'", "1.5", "lambda: 1", "Max(N, key=1)", "N +"])
def test_unsupported_constructs_are_refused(text):
    with pytest.raises(ValueError, match="expression"):
        Expr(text)


@pytest.mark.parametrize(
    "text, unknown, target, values, solution",
    [
        ("-r0 + r1", "r1", 5, {"r0": 2}, 7),
        ("-r0 + r1", "r0", 5, {"r1": 7}, 2),
        ("-2 + N", "N", 8, {}, 10),
        ("-(N - 3)", "N", 1, {}, 2),
        ("2 * N", "N", 8, {}, None),  # not a unit coefficient
        ("N + N", "N", 8, {}, None),  # twice
        ("Min(N, 5)", "N", 5, {}, None),  # not under + and - only
        ("-r0 + r1", "r1", 5, {}, None),  # another unknown
    ],
)
def test_solving_for_one_symbol(text, unknown, target, values, solution):
    assert Expr(text).solve(unknown, target, values) == solution
