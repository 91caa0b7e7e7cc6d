"""Immutable record classes, declared like dataclasses and built cheaply.

``@record`` is ``@dataclass(frozen=True, slots=True)`` for the checker's own classes: the same
annotations, defaults and :func:`dataclasses.field` options (``default_factory``, ``init``,
``repr``, ``compare``), the same frozen, slotted, value-equal instances (``eq=False`` keeps
identity equality), ``__post_init__``, ``__match_args__`` and :func:`replace`.

Why not :mod:`dataclasses` itself: on Python 3.11 it compiles every generated method with its own
``exec`` and re-creates the class for ``__slots__``, about half a millisecond per class. The
checker declares about a hundred records, so that alone was a third of a cold ``nika check``.
Here each class costs one small ``exec`` (its ``__init__``, plus ``__eq__``/``__hash__`` when
compared by value); ``__repr__`` and the frozen guards are shared functions. The generated
``__init__`` writes each slot through its member descriptor, which also makes construction about
twice as fast as a frozen dataclass's ``object.__setattr__`` per field — the YAML layer and the
compiler build tens of thousands of records for a large workflow.

Compiling those small methods was still most of the cost of declaring a record; the compiled code
is kept in :mod:`checker.core.static_cache` (keyed by the generated source itself), so a warm
start only loads it. :func:`field` is this module's own (a record also takes a
:func:`dataclasses.field`) and ``FrozenInstanceError`` (:mod:`dataclasses`' own) is looked up
when first needed: a cold ``nika check`` does not import :mod:`dataclasses`, and :mod:`inspect`
with it, for a few names.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import CodeType
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar, dataclass_transform, overload

from checker.core import static_cache

if TYPE_CHECKING:
    from dataclasses import FrozenInstanceError

__all__ = ["FrozenInstanceError", "field", "record", "record_fields", "replace"]

T = TypeVar("T")
_FIELDS = "__record_fields__"


def __getattr__(name: str) -> Any:
    """``FrozenInstanceError`` is :class:`dataclasses.FrozenInstanceError`, imported when asked for."""
    if name == "FrozenInstanceError":
        import dataclasses

        return dataclasses.FrozenInstanceError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()  # "no default", as dataclasses.MISSING


class Field:
    """A field's options, as :func:`dataclasses.field` takes them."""

    __slots__ = ("compare", "default", "default_factory", "init", "repr")

    def __init__(self, default: Any, default_factory: Any, init: bool, repr: bool, compare: bool) -> None:
        self.default, self.default_factory = default, default_factory
        self.init, self.repr, self.compare = init, repr, compare


def field(
    *,
    default: Any = MISSING,
    default_factory: Callable[[], Any] | Any = MISSING,
    init: bool = True,
    repr: bool = True,
    compare: bool = True,
) -> Any:
    """A field with options (``default``/``default_factory``, ``init``, ``repr``, ``compare``), as
    :func:`dataclasses.field`, whose fields a record also accepts."""
    if default is not MISSING and default_factory is not MISSING:
        raise ValueError("cannot specify both default and default_factory")
    return Field(default, default_factory, init, repr, compare)


class _Spec(NamedTuple):
    name: str
    default: Any  # MISSING when there is none
    factory: Any  # MISSING when there is none
    init: bool
    repr: bool
    compare: bool


@overload
def record(cls: type[T], /) -> type[T]: ...


@overload
def record(*, eq: bool = True, frozen: bool = True, slots: bool = True) -> Callable[[type[T]], type[T]]: ...


@dataclass_transform(frozen_default=True, field_specifiers=(field, Field))
def record(
    cls: type[T] | None = None, /, *, eq: bool = True, frozen: bool = True, slots: bool = True
) -> type[T] | Callable[[type[T]], type[T]]:
    """Make ``cls`` a record (see the module docstring); use bare or with options."""

    def wrap(c: type[T]) -> type[T]:
        return _build(c, eq, frozen, slots)

    return wrap if cls is None else wrap(cls)


def record_fields(obj: Any) -> tuple[_Spec, ...]:
    """The fields of a record class or instance, inherited ones first."""
    return getattr(obj, _FIELDS)  # type: ignore[no-any-return]


def replace(obj: T, /, **changes: Any) -> T:
    """A copy of the record ``obj`` with some of its init fields changed (like
    :func:`dataclasses.replace`)."""
    specs = record_fields(obj)
    kwargs = {s.name: getattr(obj, s.name) for s in specs if s.init and s.name not in changes}
    unknown = set(changes) - {s.name for s in specs if s.init}
    if unknown:
        raise TypeError(f"{type(obj).__qualname__} has no init field {sorted(unknown)[0]!r}")
    kwargs.update(changes)
    return obj.__class__(**kwargs)  # type: ignore[no-any-return]


# -- building ----------------------------------------------------------------------------------


def _is_classvar(annotation: Any) -> bool:
    text = annotation if isinstance(annotation, str) else repr(annotation)
    return text.startswith(("ClassVar", "typing.ClassVar", "t.ClassVar"))


def _own_specs(cls: type) -> list[_Spec]:
    out = []
    dc = sys.modules.get("dataclasses")  # a dataclasses.field() can only exist once it is imported
    # inspect.get_annotations(cls) without importing inspect (a class's own annotations, unevaluated)
    own = cls.__dict__.get("__annotations__")  # noqa: RUF063
    if own is None and sys.version_info >= (3, 14):  # lazily evaluated annotations (no __future__ import)
        import annotationlib  # type: ignore[import-not-found]

        own = annotationlib.get_annotations(cls, format=annotationlib.Format.FORWARDREF)
    for name, annotation in (own or {}).items():
        if _is_classvar(annotation):
            continue
        default = cls.__dict__.get(name, MISSING)
        if isinstance(default, Field):
            f = default
            out.append(_Spec(name, f.default, f.default_factory, f.init, f.repr, f.compare is not False))
        elif dc is not None and isinstance(default, dc.Field):
            f, gone = default, dc.MISSING
            value, factory = (
                (MISSING if f.default is gone else f.default),
                (MISSING if f.default_factory is gone else f.default_factory),
            )
            out.append(_Spec(name, value, factory, f.init, f.repr, f.compare is not False))
        else:
            out.append(_Spec(name, default, MISSING, True, True, True))
    return out


def _build(cls: type[T], eq: bool, frozen: bool, slots: bool) -> type[T]:
    inherited: dict[str, _Spec] = {}
    for base in reversed(cls.__mro__[1:]):
        for s in base.__dict__.get(_FIELDS, ()):
            inherited[s.name] = s
    own = _own_specs(cls)
    specs = dict(inherited)
    for s in own:
        specs[s.name] = s
    fields = tuple(specs.values())
    seen_default = False
    for s in fields:
        if not s.init:
            continue
        if s.default is not MISSING or s.factory is not MISSING:
            seen_default = True
        elif seen_default:
            raise TypeError(f"non-default field {s.name!r} follows a default field in {cls.__qualname__}")

    body = dict(cls.__dict__)
    body.pop("__dict__", None)
    body.pop("__weakref__", None)
    if slots:
        new_names = tuple(s.name for s in own if s.name not in inherited)
        for n in new_names:
            body.pop(n, None)  # a default would shadow the slot; __init__ supplies it
        body["__slots__"] = new_names
    body[_FIELDS] = fields
    body["__qualname__"] = cls.__qualname__
    body["__match_args__"] = tuple(s.name for s in fields if s.init)
    body.setdefault("__repr__", _repr)
    if frozen:
        body.setdefault("__setattr__", _frozen_setattr)
        body.setdefault("__delattr__", _frozen_delattr)
        if slots:
            body.setdefault("__getstate__", _getstate)
            body.setdefault("__setstate__", _setstate)
    if slots:
        meta: Any = type(cls)
        new: type[T] = meta(cls.__name__, cls.__bases__, body)
    else:  # the class itself gains what the record adds
        new = cls
        for k in (_FIELDS, "__match_args__", "__repr__", "__setattr__", "__delattr__"):
            if k in body and (k not in cls.__dict__ or k in (_FIELDS, "__match_args__")):
                setattr(cls, k, body[k])
    _add_methods(new, fields, eq, frozen, slots, "__init__" not in cls.__dict__)
    return new


def _add_methods(cls: type, fields: tuple[_Spec, ...], eq: bool, frozen: bool, slots: bool, init: bool) -> None:
    globs: dict[str, Any] = {"MISSING": MISSING, "_object_setattr": object.__setattr__}
    lines: list[str] = []
    if init:
        params: list[str] = []
        sets: list[str] = []
        for i, s in enumerate(fields):
            if slots:
                globs[f"_set{i}"] = getattr(cls, s.name).__set__
                assign = f"_set{i}(self, {{}})"
            elif frozen:
                assign = f"_object_setattr(self, {s.name!r}, {{}})"
            else:  # a mutable record without slots assigns as a dataclass's __init__ does
                assign = f"self.{s.name} = {{}}"
            if s.init:
                if s.factory is not MISSING:
                    globs[f"_factory{i}"] = s.factory
                    params.append(f"{s.name}=MISSING")
                    sets.append(assign.format(f"_factory{i}() if {s.name} is MISSING else {s.name}"))
                elif s.default is not MISSING:
                    globs[f"_default{i}"] = s.default
                    params.append(f"{s.name}=_default{i}")
                    sets.append(assign.format(s.name))
                else:
                    params.append(s.name)
                    sets.append(assign.format(s.name))
            elif s.factory is not MISSING:
                globs[f"_factory{i}"] = s.factory
                sets.append(assign.format(f"_factory{i}()"))
            elif s.default is not MISSING:
                globs[f"_default{i}"] = s.default
                sets.append(assign.format(f"_default{i}"))
        if hasattr(cls, "__post_init__"):
            sets.append("self.__post_init__()")
        lines.append(f"def __init__(self, {', '.join(params)}):")
        lines.extend("    " + line for line in sets or ["pass"])
    compared = [s.name for s in fields if s.compare]
    if eq and "__eq__" not in cls.__dict__:
        mine = "".join(f"self.{n}, " for n in compared)
        theirs = "".join(f"other.{n}, " for n in compared)
        lines += [
            "def __eq__(self, other):",
            "    if other.__class__ is not self.__class__:",
            "        return NotImplemented",
            f"    return ({mine}) == ({theirs})",
        ]
        if frozen:
            lines += ["def __hash__(self):", f"    return hash(({mine}))"]
    if lines:
        namespace: dict[str, Any] = {}
        exec(_compiled("\n".join(lines)), globs, namespace)
        for name, fn in namespace.items():
            fn.__qualname__ = f"{cls.__qualname__}.{name}"
            setattr(cls, name, fn)
    if eq and not frozen and "__hash__" not in cls.__dict__:
        cls.__hash__ = None  # type: ignore[assignment]


# -- the compiled methods, kept between processes ---------------------------------------------

_CODES = static_cache.Table("records", "generated methods")  # source -> its code (keyed by itself)


def _compiled(source: str) -> CodeType:
    """The code of ``source`` (as ``exec`` would compile it), from the static cache when it is there."""
    code = _CODES.get(source)
    if type(code) is not CodeType:
        code = compile(source, "<string>", "exec")
        _CODES.put(source, code)
    return code


def _repr(self: Any) -> str:
    parts = ", ".join(f"{s.name}={getattr(self, s.name, '<unset>')!r}" for s in getattr(self, _FIELDS) if s.repr)
    return f"{type(self).__qualname__}({parts})"


def _frozen_setattr(self: Any, name: str, value: Any) -> None:
    from dataclasses import FrozenInstanceError

    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _frozen_delattr(self: Any, name: str) -> None:
    from dataclasses import FrozenInstanceError

    raise FrozenInstanceError(f"cannot delete field {name!r}")


def _getstate(self: Any) -> dict[str, Any]:
    return {s.name: getattr(self, s.name) for s in getattr(self, _FIELDS) if hasattr(self, s.name)}


def _setstate(self: Any, state: dict[str, Any]) -> None:
    for name, value in state.items():
        object.__setattr__(self, name, value)
