"""Evidence capture: each message stored once on the conversation tree, what each
upstream received, and the Responses API's response ids."""
