"""Memory tools the model calls and in-chat ``/memory`` commands, answered by the proxy."""
