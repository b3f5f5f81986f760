"""The two widths every chart is drawn at (shrunk, never stretched): CSS (a container query, ui/style.py)
shows the desktop one in a chart 600 px or wider and the phone one below it, so their 12 px text never
shows smaller than ~11 px."""
CHART_W = 640
NARROW_W = 340
