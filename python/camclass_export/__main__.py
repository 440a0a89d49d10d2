"""`python3 -m camclass_export ARGS` (python/ on PYTHONPATH): the exporter, camclass-export."""
import sys

from camclass_export import launch

sys.exit(launch.run("python3 -m camclass_export", "export"))
