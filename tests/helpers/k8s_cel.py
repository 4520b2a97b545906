"""The CEL environment of a Kubernetes API server, for the CRDs' `x-kubernetes-validations` rules.

Built on cel-expr-python (requirements-test.txt says why that library). Its type checker refuses an undeclared
function or variable when a rule is compiled, so a rule using something this environment lacks is an error,
never a pass. The library ships CEL's standard functions and macros plus the strings (`lowerAscii`, `split`...),
optional (`hasValue`) and bindings extensions; the Kubernetes quantity library is declared here.
"""
from __future__ import annotations

import functools
import re
from fractions import Fraction

from cel_expr_python import cel
from cel_expr_python.ext import ext_bindings, ext_optional, ext_strings

T = cel.Type

# Property names that CEL cannot spell are escaped the way the API server does (k8s.io/apiserver/pkg/cel).
_RESERVED = {"true", "false", "null", "in", "as", "break", "const", "continue", "else", "for", "function", "if",
             "import", "let", "loop", "package", "namespace", "return", "var"}
_ESCAPES = (("__", "__underscores__"), (".", "__dot__"), ("-", "__dash__"), ("/", "__slash__"))


def escape_property(name: str) -> str:
    if name in _RESERVED:
        return f"__{name}__"
    for raw, escaped in _ESCAPES:
        name = name.replace(raw, escaped)
    return name


# --- Kubernetes quantity library (k8s.io/apiserver/pkg/cel/library/quantity.go) ---------------------------------
# The binding cannot carry an opaque Python value, so a quantity is a one-key map holding its exact value as a
# fraction; the functions below are the only ones that read it.
_QUANTITY_KEY = "kubernetes.Quantity"
_QUANTITY = T.Map(T.STRING, T.STRING)
_SUFFIXES = {"Ki": 2 ** 10, "Mi": 2 ** 20, "Gi": 2 ** 30, "Ti": 2 ** 40, "Pi": 2 ** 50, "Ei": 2 ** 60,
             "n": Fraction(1, 10 ** 9), "u": Fraction(1, 10 ** 6), "m": Fraction(1, 1000), "": 1,
             "k": 10 ** 3, "M": 10 ** 6, "G": 10 ** 9, "T": 10 ** 12, "P": 10 ** 15, "E": 10 ** 18}
_QUANTITY_RE = re.compile(r"^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))([eE][+-]?[0-9]+|Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?$")


def parse_quantity(text: str) -> Fraction:
    """The exact value of a Kubernetes quantity string ("80Gi", "500m", "1e3"); ValueError when malformed."""
    match = _QUANTITY_RE.match(text)
    if not match:
        raise ValueError(f"quantities must match the regular expression '{_QUANTITY_RE.pattern}': {text!r}")
    number, suffix = match.group(1), match.group(2) or ""
    scale = Fraction(10) ** int(suffix[1:]) if suffix[:1] in ("e", "E") and len(suffix) > 1 else _SUFFIXES[suffix]
    return Fraction(number) * scale


def _q(text: str) -> dict:
    return {_QUANTITY_KEY: str(parse_quantity(text))}


def _v(quantity: dict) -> Fraction:
    return Fraction(quantity[_QUANTITY_KEY])


def _is_quantity(text: str) -> bool:
    try:
        parse_quantity(text)
    except ValueError:
        return False
    return True


def _compare(a: dict, b: dict) -> int:
    return (_v(a) > _v(b)) - (_v(a) < _v(b))


def _overload(name, result, params, impl, member=False):
    return cel.Overload(name, result, params, is_member=member, impl=impl)


_KUBERNETES_FUNCTIONS = [
    cel.FunctionDecl("quantity", [_overload("string_to_quantity", _QUANTITY, [T.STRING], _q)]),
    cel.FunctionDecl("isQuantity", [_overload("is_quantity_string", T.BOOL, [T.STRING], _is_quantity)]),
    cel.FunctionDecl("isGreaterThan", [_overload("quantity_is_greater_than", T.BOOL, [_QUANTITY, _QUANTITY],
                                                 lambda a, b: _compare(a, b) > 0, member=True)]),
    cel.FunctionDecl("isLessThan", [_overload("quantity_is_less_than", T.BOOL, [_QUANTITY, _QUANTITY],
                                              lambda a, b: _compare(a, b) < 0, member=True)]),
    cel.FunctionDecl("compareTo", [_overload("quantity_compare_to", T.INT, [_QUANTITY, _QUANTITY], _compare,
                                             member=True)]),
    cel.FunctionDecl("sign", [_overload("quantity_sign", T.INT, [_QUANTITY],
                                        lambda q: (_v(q) > 0) - (_v(q) < 0), member=True)]),
    cel.FunctionDecl("isInteger", [_overload("quantity_is_integer", T.BOOL, [_QUANTITY],
                                             lambda q: _v(q).denominator == 1, member=True)]),
    cel.FunctionDecl("asApproximateFloat", [_overload("quantity_get_float", T.DOUBLE, [_QUANTITY],
                                                      lambda q: float(_v(q)), member=True)]),
]

# `oldSelf` of an optionalOldSelf rule is an optional value, which the binding cannot pass in: such a rule is
# evaluated inside cel.bind(oldSelf, optional.none() | optional.of(__oldSelf__), <rule>), which is the same thing.
_OLD = "__oldSelf__"


@functools.lru_cache(maxsize=1)
def environment():
    return cel.NewEnv(variables={"self": T.DYN, "oldSelf": T.DYN, _OLD: T.DYN},
                      extensions=[ext_strings.ExtStrings(), ext_optional.ExtOptional(), ext_bindings.ExtBindings()],
                      functions=_KUBERNETES_FUNCTIONS)


class CelError(Exception):
    """A rule that does not compile in this environment (unknown function, syntax) or does not yield a bool."""


REFERENCES_OLD_SELF = re.compile(r"\boldSelf\b")


@functools.lru_cache(maxsize=None)
def compile_rule(expression: str, optional_old_self: bool = False, old_present: bool = False):
    """The compiled rule; CelError names the rule when the environment cannot compile it."""
    source = expression
    if optional_old_self:
        bound = f"optional.of({_OLD})" if old_present else "optional.none()"
        source = f"cel.bind(oldSelf, {bound}, {expression})"
    try:
        return environment().compile(source)
    except RuntimeError as error:
        raise CelError(f"rule {expression!r} does not compile: {error}") from None


def evaluate(program, self_value, old_value=None):
    """The rule's value for `self` (and `oldSelf`); a runtime error raises CelError, like the API server refuses."""
    data = {"self": self_value, "oldSelf": old_value, _OLD: old_value}
    try:
        result = program.eval(data=data)
    except RuntimeError as error:
        raise CelError(str(error)) from None
    if result.type() == T.ERROR:  # the binding returns an evaluation error as a value
        raise CelError(str(result.value()))
    return result.value()
