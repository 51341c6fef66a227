"""A scripted ``llm`` model, registered through llm's own plugin hook (``register_models``):
each step is a tool call ``(name, arguments, call_id)`` or the final text; ``seen`` collects
the tool outputs the model was sent, in order."""

from __future__ import annotations

import contextlib

import llm
from llm.plugins import pm

MODEL_ID = "haversack-scripted"


class ScriptedModel(llm.Model):
    model_id = MODEL_ID
    supports_tools = True

    def __init__(self):
        self.steps: list = []
        self.seen: list[str] = []
        self.tool_names: list[str] = []

    def execute(self, prompt, stream, response, conversation):
        self.tool_names = [tool.name for tool in prompt.tools]
        self.seen.extend(result.output for result in prompt.tool_results)
        step = self.steps.pop(0)
        if isinstance(step, str):
            yield step
            return
        name, arguments, call_id = step
        response.add_tool_call(llm.ToolCall(name=name, arguments=arguments, tool_call_id=call_id))
        yield ""


class _Plugin:
    def __init__(self, model):
        self.model = model

    @llm.hookimpl
    def register_models(self, register):
        register(self.model)


@contextlib.contextmanager
def scripted(*steps):
    """Register a ScriptedModel with ``llm`` for the ``with`` block; yields it."""
    model = ScriptedModel()
    model.steps = list(steps)
    plugin = _Plugin(model)
    pm.register(plugin, name="haversack-scripted-model")
    try:
        yield model
    finally:
        pm.unregister(plugin)
