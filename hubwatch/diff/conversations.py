"""The fixed conversations every chat template is rendered on, and render_chat_template."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from .sandbox import RenderLimits, RenderResult, render_many

__all__ = ["CONVERSATIONS", "Conversation", "render_chat_template", "template_context"]

_WEATHER_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "The city name"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "nullable": True},
            },
            "required": ["city"],
        },
    },
}
_TOOL_CALL: dict[str, Any] = {
    "type": "function",
    "id": "call_0",
    "function": {"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}},
}


@dataclass(frozen=True)
class Conversation:
    """One conversation a chat template is rendered on (messages as transformers passes them)."""

    name: str
    title: str  # how a summary names it: "multi-turn conversations"
    messages: tuple[Mapping[str, Any], ...]
    add_generation_prompt: bool = True
    tools: tuple[Mapping[str, Any], ...] | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)


CONVERSATIONS: tuple[Conversation, ...] = (
    Conversation(
        "system_user", "system + user prompts",
        ({"role": "system", "content": "You are a helpful assistant."},
         {"role": "user", "content": "What is the capital of France?"}),
    ),
    Conversation(
        "multi_turn", "multi-turn conversations",
        ({"role": "user", "content": "Hi!"},
         {"role": "assistant", "content": "Hello! How can I help?"},
         {"role": "user", "content": "Tell me a joke."}),
    ),
    Conversation(
        "no_generation_prompt", "conversations without a generation prompt (training format)",
        ({"role": "user", "content": "Hi!"}, {"role": "assistant", "content": "Hello! How can I help?"}),
        add_generation_prompt=False,
    ),
    Conversation(
        "tool_call", "tool calls",
        ({"role": "user", "content": "What is the weather in Paris?"},
         {"role": "assistant", "content": "", "tool_calls": [_TOOL_CALL]},
         {"role": "tool", "name": "get_weather", "tool_call_id": "call_0", "content": '{"temperature": 21}'}),
        tools=(_WEATHER_TOOL,),
    ),
    Conversation(
        "tool_call_json_arguments", "tool calls with JSON-string arguments",
        ({"role": "user", "content": "What is the weather in Paris?"},
         {"role": "assistant", "content": "", "tool_calls": [
             {**_TOOL_CALL, "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]},
         {"role": "tool", "name": "get_weather", "tool_call_id": "call_0", "content": '{"temperature": 21}'}),
        tools=(_WEATHER_TOOL,),
    ),
    Conversation(
        "reasoning", "conversations with reasoning content",
        ({"role": "user", "content": "What is 2 + 2?"},
         {"role": "assistant", "content": "4", "reasoning_content": "2 plus 2 is 4.", "thinking": "2 plus 2 is 4."},
         {"role": "user", "content": "And 3 + 3?"}),
    ),
)  # fmt: skip


def template_context(conversation: Conversation, special_tokens: Mapping[str, Any]) -> dict[str, Any]:
    """The variables transformers' apply_chat_template passes to a template."""
    context: dict[str, Any] = {k: v for k, v in special_tokens.items()}
    context.update(conversation.extra)
    context["messages"] = [dict(m) for m in conversation.messages]
    context["tools"] = [dict(t) for t in conversation.tools] if conversation.tools is not None else None
    context["documents"] = None
    context["add_generation_prompt"] = conversation.add_generation_prompt
    return context


def render_chat_template(
    template: str,
    conversation: Conversation | Sequence[Mapping[str, Any]],
    *,
    special_tokens: Mapping[str, Any] | None = None,
    add_generation_prompt: bool = True,
    limits: RenderLimits | None = None,
) -> RenderResult:
    """Render `template` on one conversation (a Conversation, or a list of messages) in the sandbox.

    `special_tokens` (bos_token, eos_token, …: strings) are passed as template variables as
    transformers does. Never raises for a bad or hostile template: the result says what failed.
    """
    if not isinstance(conversation, Conversation):
        conversation = Conversation("custom", "the given conversation", tuple(conversation), add_generation_prompt)
    return render_many(template, [template_context(conversation, special_tokens or {})], limits)[0]
