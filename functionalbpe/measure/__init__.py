"""Measuring tokenizers: the report, its measures, tables and HTML."""
