"""The report's acceptance charts: each node's figures against its group
(:func:`node_chart`) and the link matrix of node pairs (:func:`pair_chart`).
"""

import math

from matplotlib.colors import LinearSegmentedColormap
from matplotlib.patches import Rectangle

from clusterbench.core.figures import Better
from clusterbench.report.plotkit import (
    LINE_COLOURS,
    MAX_LABEL,
    clip,
    direction_note,
    literal,
    new_figure,
    row_labels,
    set_title,
)


def node_chart(plots, group):
    hosts = sorted(group.values)
    n = len(hosts)
    fig = new_figure(7.6, 0.9 + 0.22 * max(n, 3))
    longest = min(MAX_LABEL, max(len(h) for h in hosts))
    height = fig.get_size_inches()[1]
    left = (0.25 + 0.068 * longest) / 7.6
    ax = fig.add_axes([left, 0.55 / height, 0.92 - left, 1 - 0.95 / height])
    ys = list(range(n))[::-1]
    rows = []
    for flagged, colour, size in ((False, LINE_COLOURS[0], 4), (True, '#c62828', 6)):
        pts = [
            (group.values[h], y)
            for y, h in zip(ys, hosts)
            if (h in group.flagged) == flagged
        ]
        if pts:
            ax.plot(*zip(*pts), 'o', color=colour, markersize=size, ls='none')
    for y, host in zip(ys, hosts):
        value = group.values[host]
        flagged = host in group.flagged
        if flagged:
            ax.annotate(
                literal(f'{host}: flagged'),
                (value, y),
                xytext=(7, 0),
                textcoords='offset points',
                va='center',
                fontsize=7,
                color='#c62828',
            )
        rows.append(
            (
                host,
                value,
                group.unit,
                group.verdicts.get(host, ''),
                'yes' if flagged else '',
                group.flagged.get(host, ''),
            )
        )
    ax.axvline(group.median, color='black', lw=1, ls='--')
    ax.text(group.median, 1.0, ' median', transform=ax.get_xaxis_transform(),
            va='bottom', fontsize=7)  # fmt: skip
    row_labels(ax, ys, [clip(h) for h in hosts])
    ax.set_ylim(-0.7, n - 0.3)
    ax.set_xlabel(literal(f'[{group.unit}]{direction_note(group.better)}'))
    set_title(fig, f'{group.title} on {group.system}, per node')
    return plots.add(
        'nodes',
        f'{group.system} {group.title}',
        fig,
        ('node', 'value', 'unit', 'verdict', 'flagged', 'reason'),
        rows,
        caption=f'{n} nodes, {len(group.flagged)} flagged',
    )


HEAT = LinearSegmentedColormap.from_list('cb', ['#f7fbff', '#6baed6', '#08306b'])


def pair_chart(plots, matrix):
    nodes = matrix.nodes
    n = len(nodes)
    height = min(7.6, 2.6 + 0.32 * n)
    fig = new_figure(7.6, height)
    ax = fig.add_axes([0.12, 0.9 / height, 0.62, 1 - 1.35 / height])
    grid = [[math.nan] * n for _ in range(n)]
    for (a, b), value in matrix.values.items():
        i, j = nodes.index(a), nodes.index(b)
        grid[i][j] = value
        if (b, a) not in matrix.values:
            grid[j][i] = value  # one value per pair: the same both ways
    heat = HEAT.reversed() if matrix.better == Better.LOWER else HEAT
    image = ax.imshow(grid, cmap=heat)
    ax.set_facecolor('#eeeeee')
    norm = image.norm
    for i in range(n):
        for j in range(n):
            if i == j:
                continue
            value = grid[i][j]
            pair = (nodes[i], nodes[j])
            if math.isnan(value):
                ax.text(
                    j, i, '—', ha='center', va='center', fontsize=7, color='#777777'
                )
                continue
            if n <= 16:
                shade = norm(value)
                dark = shade > 0.55 if matrix.better != Better.LOWER else shade < 0.45
                text = f'{value:.0f}' if abs(value) >= 1000 else f'{value:.3g}'
                ax.text(j, i, text, ha='center', va='center', fontsize=6,
                        color='white' if dark else 'black')  # fmt: skip
            if pair in matrix.flagged or pair[::-1] in matrix.flagged:
                ax.add_patch(
                    Rectangle(
                        (j - 0.5, i - 0.5), 1, 1, fill=False, ec='#c62828', lw=2.2
                    )
                )
    ax.set_xticks(range(n))
    ax.set_yticks(range(n))
    ax.set_xticklabels([literal(clip(n, 24)) for n in nodes], rotation=90)
    ax.set_yticklabels([literal(clip(n, 24)) for n in nodes])
    ax.grid(False)
    cax = fig.add_axes([0.8, 0.9 / height, 0.025, 1 - 1.35 / height])
    fig.colorbar(
        image, cax=cax, label=literal(f'[{matrix.unit}]{direction_note(matrix.better)}')
    )
    set_title(fig, f'{matrix.title} on {matrix.system}, all pairs')
    rows = [
        (a, b, value, matrix.unit,
         'yes' if (a, b) in matrix.flagged or (b, a) in matrix.flagged else '',
         matrix.flagged.get((a, b)) or matrix.flagged.get((b, a)) or '')
        for (a, b), value in sorted(matrix.values.items())
    ]  # fmt: skip
    return plots.add(
        'pairs',
        f'{matrix.system} {matrix.title}',
        fig,
        ('node_a', 'node_b', 'value', 'unit', 'flagged', 'reason'),
        rows,
        caption=f'{len(matrix.values)} pairs of {n} nodes, '
        f'{len(matrix.flagged)} flagged',
    )
