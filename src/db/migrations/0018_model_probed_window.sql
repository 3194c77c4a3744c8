-- A model saved without a contextWindow keeps the window its provider reports (llama.cpp /props,
-- /models context_length, Gemini limits) and where that number came from; turns fit into it.
ALTER TABLE "models" ADD COLUMN "probed_context_window" integer;--> statement-breakpoint
ALTER TABLE "models" ADD COLUMN "probed_context_window_source" text;