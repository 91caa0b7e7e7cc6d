"""The host matcher and the SSRF floor, pinned so that a planted mutant fails a test.

Two mutants survived the earlier suite: a host grant compared as a suffix (a grant for
`example.com` admitting `evilexample.com`) and the 6to4 unwrap of the floor removed. These
tests pin the exact host comparison and every address form the floor unwraps, on the one judge
the checker and the runtime share (:func:`checker.contracts.effects.address_floor`).
"""

from __future__ import annotations

import ipaddress

import pytest

from checker.contracts import effects
from checker.contracts.effects import Boundary


@pytest.mark.parametrize(
    ("host", "allowed"),
    [
        ("shop.example", True),
        ("SHOP.example.", True),
        ("shop.example:443", True),
        ("evilshop.example", False),  # a suffix is not the host
        ("x.shop.example", False),  # nor is a subdomain
        ("shop.example.evil", False),  # nor a prefix
        ("shop.exampl", False),
        ("hop.example", False),
        ("", False),
    ],
)
def test_a_host_grant_matches_the_exact_host_only(host: str, allowed: bool) -> None:
    b = Boundary.from_data({"net": {"http": ["shop.example"]}})
    assert (b.check("net", host) is None) is allowed


def test_the_star_grant_and_a_grant_spelled_differently() -> None:
    assert Boundary.from_data({"net": {"http": ["*"]}}).check("net", "any.example") is None
    assert Boundary.from_data({"net": {"http": [" SHOP.Example. "]}}).check("net", "shop.example") is None
    assert Boundary.from_data({"net": {"http": ["*.example"]}}).check("net", "a.example") is not None


# every spelling of a refused address the floor unwraps, with the class it must name
FORMS = [
    ("127.0.0.1", "loopback"),
    ("2130706433", "loopback"),  # one decimal number
    ("0x7f.1", "loopback"),  # hex, short form
    ("0177.0.0.1", "loopback"),  # octal
    ("127.1", "loopback"),
    ("::1", "loopback"),
    ("::ffff:127.0.0.1", "loopback"),  # IPv4-mapped
    ("::ffff:7f00:1", "loopback"),  # IPv4-mapped, hex
    ("::127.0.0.1", "loopback"),  # IPv4-compatible (deprecated)
    ("2002:7f00:1::", "loopback"),  # 6to4 of 127.0.0.1
    ("2002:a00:1::1", "private"),  # 6to4 of 10.0.0.1
    ("2002:a9fe:a9fe::", "metadata"),  # 6to4 of 169.254.169.254
    ("2001:0:4136:e378:8000:63bf:80ff:fffe", "loopback"),  # Teredo, client 127.0.0.1
    ("64:ff9b::7f00:1", "loopback"),  # NAT64 well-known prefix
    ("64:ff9b::a9fe:a9fe", "metadata"),
    ("64:ff9b:1::a00:1", "private"),  # NAT64 local-use prefix
    ("fe80::1%eth0", "link-local"),  # with a zone
    ("[fd00:ec2::254]", "metadata"),
    ("169.254.170.2", "metadata"),
    ("100.100.100.200", "metadata"),
    ("100.64.0.1", "shared"),
    ("10.1.2.3", "private"),
    ("172.16.0.1", "private"),
    ("192.168.0.1", "private"),
    ("fc00::1", "private"),
    ("224.0.0.1", "multicast"),
    ("ff02::1", "multicast"),
    ("0.0.0.0", "unspecified"),
    ("::", "unspecified"),
    ("240.0.0.1", "reserved"),
    ("192.0.2.1", "private"),  # documentation range
]


@pytest.mark.parametrize(("spelling", "cls"), FORMS)
def test_every_form_the_floor_unwraps_is_refused_with_its_class(spelling: str, cls: str) -> None:
    why = effects.floor_reason(spelling)
    assert why is not None and cls in why, (spelling, why)


EXACT = {
    "metadata": "a cloud metadata endpoint",
    "loopback": "a loopback address",
    "link-local": "a link-local address",
    "multicast": "a multicast address",
    "shared": "a shared (carrier-grade NAT) address",
    "unspecified": "the unspecified address",
    "reserved": "a reserved address",
    "private": "a private address",
}


@pytest.mark.parametrize(("spelling", "cls"), FORMS)
def test_each_form_names_its_exact_reason(spelling: str, cls: str) -> None:
    assert effects.floor_reason(spelling) == EXACT[cls]


@pytest.mark.parametrize(
    ("spelling", "reason"),
    [
        ("::2", "a private address"),  # IPv4-compatible ::0.0.0.2, judged as 0.0.0.2
        ("::1:7f00:1", "a reserved address"),  # not IPv4-compatible (bit 32 set): the v6 address itself
        ("3fff::1", "a non-public address"),  # the RFC 9637 documentation range
        ("fec0::1", "a non-public address"),  # deprecated site-local
    ],
)
def test_the_edges_of_the_unwraps(spelling: str, reason: str) -> None:
    assert effects.floor_reason(spelling) == reason


def test_address_spellings_the_parser_must_not_admit() -> None:
    assert effects.address_of("127.0.0.1 x") is None  # inet_aton would read past the space
    assert effects.address_of("[::1") is None and effects.address_of("::1]") is None
    assert str(effects.address_of("[::1]")) == "::1"
    assert str(effects.address_of("fe80::1%a%b")) == "fe80::1"
    assert effects.address_of("0x7f.1") is not None and effects.address_of("example.com") is None
    assert effects.address_of("1:::") is None and effects.address_of("") is None


def test_a_host_that_idna_cannot_encode_stays_as_written() -> None:
    long_label = "ü" * 70 + ".example"
    assert effects.canonical_host(long_label) == long_label


def test_every_env_class_says_why() -> None:
    for group in ("floor", "locator"):
        for cls, why in effects.env_classes(group).items():
            assert len(why) > 20 and why != "None", cls


@pytest.mark.parametrize(
    "spelling",
    ["8.8.8.8", "2002:808:808::", "64:ff9b::808:808", "::ffff:8.8.8.8", "2606:4700:4700::1111", "example.com"],
)
def test_public_addresses_in_the_same_forms_pass(spelling: str) -> None:
    assert effects.floor_reason(spelling) is None


def test_the_runtime_floor_is_the_same_judge() -> None:
    from runtime.net.ssrf import why_refused

    for spelling, _cls in FORMS:
        addr = effects.address_of(spelling)
        assert addr is not None, spelling
        assert why_refused(addr) == effects.address_floor(addr), spelling
    assert why_refused(ipaddress.ip_address("2002:808:808::")) is None
