"""Wire adapters: everything specific to one API's wire format (DESIGN §2).

``base.WireAdapter`` is the interface the memory steps and the tool loop use;
``chat`` implements it for OpenAI Chat Completions, ``chatstream`` is its sans-io
stream round. The Responses API and Anthropic Messages become two more adapters.
"""
