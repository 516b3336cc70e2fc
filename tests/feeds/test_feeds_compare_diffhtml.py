"""The `diffhtml` filter (a unified diff's HTML built in Python, for the compare page's long diffs)
writes exactly what the textdiff macro's template loop wrote, hostile text included."""

from __future__ import annotations

import pytest

from hubwatch.diff import diff_text
from hubwatch.feeds.templating import make_templates

# The textdiff macro's loop as it was, before `diffhtml` replaced it.
LOOP = (
    '<pre class="diff">{% for line in text | difflines %}<span class="{{ line.kind }}"><span class="sign">'
    "{{ line.sign }}</span>{% for seg in line.segments %}{% if seg.changed %}<mark{% if seg.blank %}"
    ' class="ws" title="whitespace"{% endif %}>{{ seg.text }}</mark>{% else %}{{ seg.text }}{% endif %}'
    "{% endfor %}</span>{% endfor %}</pre>"
)

CASES = [
    ("a\nb\nc\n", "a\nB\nc\n"),
    ("{{ bos_token }}<|user|>\n", "{{ bos_token }}<|user|> \n"),  # trailing whitespace marked
    ('<script>alert("x")</script> & \x07bell\n', "<script>alert('y')</script> &amp; \x0bvt\n"),
    ("same line kept\nold tail", "same line kept\nnew tail"),  # "\ No newline at end of file"
    ("x" * 30_000, "y" * 30_000),  # clipped at the shown length
]


@pytest.mark.parametrize(("old", "new"), CASES)
def test_diffhtml_writes_what_the_template_loop_wrote(old: str, new: str) -> None:
    env = make_templates("http://testserver").env
    text = diff_text(old, new, old_name="old/x", new_name="new/x", max_chars=100_000)
    before = env.from_string(LOOP).render(text=text)
    after = env.from_string('<pre class="diff">{{ text | diffhtml }}</pre>').render(text=text)
    assert after == before
