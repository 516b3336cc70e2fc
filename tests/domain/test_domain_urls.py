"""The one URL-safety check: absolute http(s) with a host; malformed URLs are unsafe, never a crash."""

from __future__ import annotations

import pytest

from hubwatch.advisories.osv import InvalidAdvisory, validate_osv
from hubwatch.domain.urls import is_safe_url
from hubwatch.feeds.templating import make_templates

MALFORMED = ["http://[::1", "https://[::1/path", "http://h:99999/", "http://h:port/"]


@pytest.mark.parametrize("url", MALFORMED)
def test_malformed_urls_are_unsafe_not_errors(url: str) -> None:
    assert is_safe_url(url) is False


@pytest.mark.parametrize("url", ["javascript:alert(1)", "data:text/html,x", "mailto:a@b.c", "/models/x",
                                 "//host/p", "http:/nohost", "http://user@/p", "ftp://h/p", "", None, 3])
def test_other_schemes_relative_and_non_strings_are_unsafe(url: object) -> None:
    assert is_safe_url(url) is False


def test_absolute_http_urls_are_safe() -> None:
    for url in ("https://huggingface.co/org/name", "HTTP://h", "http://[::1]:8000/x", "http://h:80/p?q#f"):
        assert is_safe_url(url), url


def test_osv_validation_reports_a_malformed_reference_instead_of_raising_valueerror() -> None:
    record = {"id": "x_T-1", "modified": "2024-01-01T00:00:00Z", "schema_version": "1.7.5",
              "references": [{"type": "WEB", "url": "http://[::1"}]}
    with pytest.raises(InvalidAdvisory, match=r"/references/0/url: 'http://\[::1' is not an absolute http\(s\) URL"):
        validate_osv(record)


def test_templates_use_the_same_check() -> None:
    env = make_templates("http://testserver").env
    assert env.filters["safe_url"] is is_safe_url
    page = env.from_string("{% for u in urls %}{{ 'link' if u | safe_url else 'text' }} {% endfor %}")
    assert page.render(urls=["http://[::1", "https://h/p", "javascript:x"]) == "text link text "
