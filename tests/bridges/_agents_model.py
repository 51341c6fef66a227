"""A scripted Agents SDK model: the SDK ships no offline fake model, so the tests subclass
its ``Model`` interface. Each step is a tool call ``(name, arguments, call_id)`` or the final
text; ``seen`` collects the tool outputs the model was sent, in order."""

from __future__ import annotations

import json

from agents import Model, ModelResponse, Usage
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)


class ScriptedModel(Model):
    def __init__(self, *steps):
        self.steps = list(steps)
        self.seen: list[str] = []
        self.tool_names: list[str] = []
        self._sent = 0

    async def get_response(self, system_instructions, input, model_settings, tools, *_, **__):
        self.tool_names = [tool.name for tool in tools]
        items = [] if isinstance(input, str) else list(input)
        outputs = [i["output"] for i in items if _type(i) == "function_call_output"]
        self.seen.extend(str(o) for o in outputs[self._sent :])
        self._sent = len(outputs)
        step = self.steps.pop(0)
        if isinstance(step, str):
            item = ResponseOutputMessage(
                id="m",
                type="message",
                role="assistant",
                status="completed",
                content=[ResponseOutputText(type="output_text", text=step, annotations=[])],
            )
        else:
            name, arguments, call_id = step
            item = ResponseFunctionToolCall(
                type="function_call",
                name=name,
                arguments=json.dumps(arguments),
                call_id=call_id,
                id=f"fc-{call_id}",
                status="completed",
            )
        return ModelResponse(output=[item], usage=Usage(), response_id=None)

    def stream_response(self, *args, **kwargs):
        raise NotImplementedError("the tests run without streaming")


def _type(item):
    return item.get("type") if isinstance(item, dict) else getattr(item, "type", None)
