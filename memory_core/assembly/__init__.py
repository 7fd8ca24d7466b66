"""The injection block and the context budget of each upstream request."""
