"""Word-level metric-DP mechanisms (text in, text out), one module per mechanism."""
