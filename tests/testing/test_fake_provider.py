"""FakeProvider: the real SDK clients parse what it sends, and it records what they sent."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import anthropic
import openai
import pytest

from haversack.testing import FakeCall, FakeProvider, FakeReply, ReceivedRequest


def test_chat_completions_as_the_sdk_reads_them():
    reply = FakeReply("hi", calls=[FakeCall("t", '{"a": ', "c1")], input_tokens=3, output_tokens=4)
    with (
        FakeProvider([reply]) as fake,
        openai.OpenAI(base_url=fake.openai_base_url, api_key="k") as client,
    ):
        completion = client.chat.completions.create(
            model="m", messages=[{"role": "system", "content": "be brief"}]
        )
    message = completion.choices[0].message
    assert message.content == "hi"
    assert message.tool_calls[0].function.arguments == '{"a": '  # malformed, sent as is
    assert completion.choices[0].finish_reason == "tool_calls"
    assert completion.usage.prompt_tokens == 3
    assert fake.requests[0].system == "be brief"


def test_a_streamed_response_accumulates_to_the_same_output():
    reply = FakeReply("a long enough text", calls=[FakeCall("t", {"a": 1}, "c1")])
    with (
        FakeProvider([reply]) as fake,
        openai.OpenAI(base_url=fake.openai_base_url, api_key="k") as client,
        client.responses.stream(model="m", input="x", instructions="sys") as stream,
    ):
        deltas = [e.delta for e in stream if e.type == "response.output_text.delta"]
        response = stream.get_final_response()
    assert "".join(deltas) == "a long enough text"
    assert len(deltas) > 1
    call = next(item for item in response.output if item.type == "function_call")
    assert (call.call_id, call.name, json.loads(call.arguments)) == ("c1", "t", {"a": 1})
    assert fake.requests[0].system == "sys"


def test_anthropic_messages_streamed_and_whole():
    reply = FakeReply("ok", calls=[FakeCall("t", {"a": 1}, "toolu_1")], stop=None)
    with (
        FakeProvider([reply, reply]) as fake,
        anthropic.Anthropic(base_url=fake.anthropic_base_url, api_key="k") as client,
    ):
        whole = client.messages.create(model="m", max_tokens=5, messages=[], system="s")
        with client.messages.stream(model="m", max_tokens=5, messages=[]) as stream:
            streamed = stream.get_final_message()
    for message in (whole, streamed):
        assert message.stop_reason == "tool_use"
        assert [b.type for b in message.content] == ["text", "tool_use"]
        assert message.content[1].input == {"a": 1}
    assert fake.requests[0].system == "s"
    assert [r.api for r in fake.requests] == ["anthropic", "anthropic"]


def test_a_step_may_answer_from_the_request():
    def echo(request: ReceivedRequest) -> FakeReply:
        return FakeReply(f"you offered {', '.join(request.tool_names)}")

    tools = [{"type": "function", "function": {"name": "alpha", "parameters": {}}}]
    with (
        FakeProvider([echo]) as fake,
        openai.OpenAI(base_url=fake.openai_base_url, api_key="k") as client,
    ):
        completion = client.chat.completions.create(model="m", messages=[], tools=tools)
    assert completion.choices[0].message.content == "you offered alpha"


def test_past_the_script_and_unknown_paths_are_clear_errors():
    with FakeProvider([FakeReply("one")]) as fake:
        with openai.OpenAI(base_url=fake.openai_base_url, api_key="k", max_retries=0) as client:
            client.chat.completions.create(model="m", messages=[])
            with pytest.raises(openai.BadRequestError, match="script is exhausted after 1"):
                client.chat.completions.create(model="m", messages=[])
        request = urllib.request.Request(fake.url + "/v1/embeddings", data=b"{}", method="POST")
        with pytest.raises(urllib.error.HTTPError) as error:
            urllib.request.urlopen(request)
        assert error.value.code == 404
        error.value.close()
    assert fake.remaining == 0
    assert len(fake.requests) == 2


def test_url_needs_a_running_server():
    with pytest.raises(RuntimeError, match="not running"):
        _ = FakeProvider().url
