"""Wire adapters: everything specific to one API's wire format (DESIGN §2).

``base.WireAdapter`` is the interface the memory steps and the tool loop use;
``chat`` implements it for OpenAI Chat Completions (``chatstream``: its sans-io
stream round), ``responses`` for the OpenAI Responses API (``responsesstream``),
``messages`` for Anthropic Messages (``messagesstream``); ``streamsession``: what
one streamed answer shares across its rounds, per API.
"""
