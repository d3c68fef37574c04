"""The offline bench: UtilityAUC of a model's responses with and without the guard."""
