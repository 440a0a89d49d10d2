"""`python3 -m camclass_export ARGS` (python/ on PYTHONPATH): the exporter, camclass-export."""
import sys

from camclass_export import export

sys.exit(export.main())
