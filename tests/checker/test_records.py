"""`checker.core.records`: the checker's record classes behave like the frozen dataclasses they replace."""

from __future__ import annotations

import copy
import pickle
from dataclasses import field

import pytest

from checker.core.records import FrozenInstanceError, record, record_fields, replace


@record
class Point:
    x: int
    y: int = 0
    tags: tuple[str, ...] = ()
    note: str = field(default="", compare=False, repr=False)


@record(eq=False)
class Node:
    name: str
    children: list[Node] = field(default_factory=list)
    size: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        object.__setattr__(self, "size", len(self.children))


@record
class Point3(Point):
    z: int = 0


@record(frozen=False, slots=False)
class Counter:
    hits: int = 0
    seen: dict[str, int] = field(default_factory=dict)


def test_fields_defaults_and_factories() -> None:
    p = Point(1)
    assert (p.x, p.y, p.tags, p.note) == (1, 0, (), "")
    a, b = Node("a"), Node("b")
    assert a.children == [] and a.children is not b.children
    assert [s.name for s in record_fields(Point3)] == ["x", "y", "tags", "note", "z"]
    assert Point3(1, 2, z=3).z == 3


def test_frozen_and_slotted() -> None:
    p = Point(1, 2)
    with pytest.raises(FrozenInstanceError):
        p.x = 5  # type: ignore[misc]
    with pytest.raises(FrozenInstanceError):
        del p.y  # type: ignore[misc]
    assert not hasattr(p, "__dict__")
    c = Counter()
    c.hits += 1
    assert c.hits == 1


def test_value_equality_and_hash_skip_uncompared_fields() -> None:
    assert Point(1, 2, note="a") == Point(1, 2, note="b")
    assert hash(Point(1, 2, note="a")) == hash(Point(1, 2, note="b"))
    assert Point(1, 2) != Point(1, 3)
    assert Point(1, 2) != Point3(1, 2)  # another class never compares equal
    assert len({Point(1), Point(1), Point(2)}) == 2
    with pytest.raises(TypeError):
        hash(Counter())  # mutable and compared by value: unhashable, as a dataclass would be


def test_identity_records_compare_by_identity() -> None:
    a, b = Node("a"), Node("a")
    assert a != b and a == a
    assert len({a, b}) == 2


def test_post_init_and_init_false_fields() -> None:
    n = Node("root", [Node("a"), Node("b")])
    assert n.size == 2
    with pytest.raises(TypeError):
        Node("x", [], 3)  # type: ignore[call-arg]


def test_replace_repr_match_args() -> None:
    p = Point(1, 2, ("t",), note="n")
    q = replace(p, y=5)
    assert (q.x, q.y, q.tags, q.note) == (1, 5, ("t",), "n")
    with pytest.raises(TypeError):
        replace(p, nope=1)
    assert repr(p) == "Point(x=1, y=2, tags=('t',))"
    assert Point.__match_args__ == ("x", "y", "tags", "note")
    match p:
        case Point(1, y):
            assert y == 2
        case _:
            raise AssertionError("no match")


def test_copy_and_pickle_round_trip() -> None:
    p = Point3(1, 2, ("a",), z=4)
    assert copy.copy(p) == p and copy.deepcopy(p) == p
    assert pickle.loads(pickle.dumps(p)) == p


def test_a_required_field_after_a_default_is_refused() -> None:
    with pytest.raises(TypeError, match="non-default field"):

        @record
        class Bad:
            a: int = 0
            b: int  # type: ignore[misc]
