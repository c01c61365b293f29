"""inject — the context envelope (``filter``) and the sources it gathers: the rules bundle, the
rule files observed in the request, the memory snapshot, retrieved evidence."""
