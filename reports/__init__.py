"""HTML run reports, plots, timelines and the campaign index."""
