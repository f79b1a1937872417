"""Integer expressions of the program description (shapes, strides, sizes), parsed once with
:mod:`ast` and evaluated without ``eval``.

The operators and functions are those sdfc prints and evaluates itself (``ir/Expr.cpp``):
integers, symbol names, ``+ - * / // % **``, bit operations, comparisons, ``and``/``or``/``not``,
conditional expressions and ``Min``/``Max``/``int_floor``/``int_ceil``/``Mod``/``Abs`` (also
``min``, ``max``, ``abs``, ``floor``, ``ceiling``, ``int``). As in sdfc, arithmetic is on signed
64-bit integers: a result that overflows, a division by zero or an inexact ``/`` has no value.
"""

import ast
import operator

_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1


class _NoValue(Exception):
    """Raised inside an evaluation whose result does not exist (overflow, division by zero)."""


def _checked(value):
    if not _INT64_MIN <= value <= _INT64_MAX:
        raise _NoValue
    return value


def _floor_div(a, b):
    if b == 0:
        raise _NoValue
    return a // b  # Python's // and % round towards negative infinity, like sdfc's floor_div


def _floor_mod(a, b):
    if b == 0:
        raise _NoValue
    return a % b


def _exact_div(a, b):
    if b == 0 or a % b != 0:
        raise _NoValue
    return a // b


def _power(a, b):
    if b < 0:
        raise _NoValue
    result = 1
    for _ in range(b):
        result = _checked(result * a)
    return result


def _left_shift(a, b):
    if not 0 <= b <= 62:
        raise _NoValue
    return _checked(a << b)


def _right_shift(a, b):
    if not 0 <= b <= 63:
        raise _NoValue
    return a >> b


_BINARY = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: _exact_div,
    ast.FloorDiv: _floor_div,
    ast.Mod: _floor_mod,
    ast.Pow: _power,
    ast.BitAnd: operator.and_,
    ast.BitOr: operator.or_,
    ast.BitXor: operator.xor,
    ast.LShift: _left_shift,
    ast.RShift: _right_shift,
}
_UNARY = {
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
    ast.Not: lambda a: int(not a),
    ast.Invert: operator.invert,
}
_COMPARE = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
}


def _at_least_one(f):
    def call(*args):
        if not args:
            raise _NoValue
        return f(args)

    return call


def _binary_function(f):
    def call(*args):
        if len(args) != 2:
            raise _NoValue
        return f(*args)

    return call


def _unary_function(f):
    def call(*args):
        if len(args) != 1:
            raise _NoValue
        return f(args[0])

    return call


_FUNCTIONS = {
    "Max": _at_least_one(max),
    "max": _at_least_one(max),
    "Min": _at_least_one(min),
    "min": _at_least_one(min),
    "int_floor": _binary_function(_floor_div),
    "int_ceil": _binary_function(lambda a, b: -_floor_div(-a, b)),
    "Mod": _binary_function(_floor_mod),
    "Abs": _unary_function(abs),
    "abs": _unary_function(abs),
    "floor": _unary_function(lambda a: a),
    "ceiling": _unary_function(lambda a: a),
    "int": _unary_function(lambda a: a),
}


class Expr:
    """One integer expression of the program description.

    ``text`` is the expression as sdfc printed it, ``symbols`` the names it uses, ``bare_symbol``
    the name when the whole expression is one symbol (else ``None``) and ``constant`` its value
    when it uses no symbol (else ``None``).
    """

    __slots__ = ("text", "symbols", "bare_symbol", "constant", "_tree")

    def __init__(self, text):
        """Parses ``text``; raises ValueError naming the construct it does not support."""
        self.text = text
        try:
            self._tree = ast.parse(text.strip(), mode="eval").body
        except SyntaxError as e:
            raise ValueError(f"cannot parse the expression {text!r}: {e.msg}") from None
        names = set()
        self._check(self._tree, names)
        self.symbols = frozenset(names)
        self.bare_symbol = self._tree.id if isinstance(self._tree, ast.Name) else None
        self.constant = self.evaluate({}) if not names else None

    def _check(self, node, names):
        """Collects the symbol names of ``node`` and refuses what :meth:`evaluate` cannot compute."""
        if isinstance(node, ast.Constant) and type(node.value) in (int, bool):
            return
        if isinstance(node, ast.Name):
            names.add(node.id)
            return
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCTIONS:
            if node.keywords:
                raise ValueError(f"unsupported keyword arguments in the expression {self.text!r}")
            children = node.args
        elif isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            children = [node.left, node.right]
        elif isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
            children = [node.operand]
        elif isinstance(node, ast.Compare) and all(type(op) in _COMPARE for op in node.ops):
            children = [node.left, *node.comparators]
        elif isinstance(node, ast.BoolOp):
            children = node.values
        elif isinstance(node, ast.IfExp):
            children = [node.test, node.body, node.orelse]
        else:
            raise ValueError(f"unsupported construct {ast.dump(node)} in the expression {self.text!r}")
        for child in children:
            self._check(child, names)

    def evaluate(self, values):
        """The value for the symbol values ``values`` (a mapping name -> int), or ``None`` when a
        symbol has no value or the arithmetic overflows 64 bits or divides by zero."""
        try:
            return _checked(self._eval(self._tree, values))
        except _NoValue:
            return None

    def _eval(self, node, values):
        if isinstance(node, ast.Constant):
            return int(node.value)
        if isinstance(node, ast.Name):
            value = values.get(node.id)
            if value is None:
                raise _NoValue
            return value
        if isinstance(node, ast.BinOp):
            left = self._eval(node.left, values)
            return _checked(_BINARY[type(node.op)](left, self._eval(node.right, values)))
        if isinstance(node, ast.UnaryOp):
            return _checked(_UNARY[type(node.op)](self._eval(node.operand, values)))
        if isinstance(node, ast.Compare):
            left = self._eval(node.left, values)
            for op, right_node in zip(node.ops, node.comparators):
                right = self._eval(right_node, values)
                if not _COMPARE[type(op)](left, right):
                    return 0
                left = right
            return 1
        if isinstance(node, ast.BoolOp):
            is_and = isinstance(node.op, ast.And)
            for value_node in node.values:
                value = self._eval(value_node, values)
                if is_and and not value:
                    return 0
                if not is_and and value:
                    return 1
            return int(is_and)
        if isinstance(node, ast.IfExp):
            return self._eval(node.body if self._eval(node.test, values) else node.orelse, values)
        return _checked(_FUNCTIONS[node.func.id](*(self._eval(a, values) for a in node.args)))

    def solve(self, unknown, target, values):
        """The value of the symbol ``unknown`` that makes the expression equal ``target``, when the
        expression is ``c + unknown`` or ``c - unknown`` with ``unknown`` occurring once and only
        under additions, subtractions and signs, and ``values`` gives every other symbol; else
        ``None``. (GT4Py's shapes ``-__a_I_range_0 + __a_I_range_1`` are of this form.)"""
        sign = self._sign_of(self._tree, unknown)
        if sign is None:
            return None
        rest = self.evaluate(dict(values, **{unknown: 0}))
        if rest is None:
            return None
        solution = (target - rest) * sign
        return solution if self.evaluate(dict(values, **{unknown: solution})) == target else None

    def _sign_of(self, node, unknown):
        """+1 or -1: the sign with which ``unknown`` enters ``node`` through +, - and unary signs
        only, occurring exactly once; ``None`` otherwise."""
        if isinstance(node, ast.Name):
            return 1 if node.id == unknown else None
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            sign = self._sign_of(node.operand, unknown)
            return None if sign is None else (-sign if isinstance(node.op, ast.USub) else sign)
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
            in_left = _uses(node.left, unknown)
            in_right = _uses(node.right, unknown)
            if in_left == in_right:
                return None
            if in_left:
                return self._sign_of(node.left, unknown)
            sign = self._sign_of(node.right, unknown)
            return None if sign is None else (-sign if isinstance(node.op, ast.Sub) else sign)
        return None

    def __repr__(self):
        return f"Expr({self.text!r})"


def _uses(node, name):
    """Whether the symbol ``name`` occurs in ``node`` (function names are not symbols)."""
    if isinstance(node, ast.Name):
        return node.id == name
    if isinstance(node, ast.Call):
        return any(_uses(a, name) for a in node.args)
    return any(_uses(child, name) for child in ast.iter_child_nodes(node))
