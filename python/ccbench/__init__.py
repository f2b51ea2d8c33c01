"""ccbench: describe a congestion-control experiment once, run it, get metrics and plots."""
from .api import (__version__, analyze, compare, export_pcap, import_pcap, load_experiment, plot,
                  run, run_both, schemes)
from .campaign import aggregate, campaign_dataset, sweep
from .results.export import export_tables
from .results import Results, load

__all__ = ["__version__", "aggregate", "analyze", "campaign_dataset", "export_tables", "compare", "export_pcap", "import_pcap", "load",
           "load_experiment", "plot", "run", "run_both", "schemes", "sweep", "Results"]
