"""Hand-written notes and queries of the bilingual (English + Russian) benchmark vault."""
