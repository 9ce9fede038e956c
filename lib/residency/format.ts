/**
 * The residency map as text: per lane a heading, a table of its places (kind, name, logical id, region,
 * geography, inside the lane or not, encryption, retention) and what is flagged, then one summary line.
 */
import type { LaneResidency, ResidencyMap } from './model.js';

/** Where a lane's templates came from, in words. */
export function describeSource(lane: LaneResidency): string {
  switch (lane.source) {
    case 'synth':
      return `stack ${lane.stack}, synthesized in-process`;
    case 'cdk-out':
      return `stack ${lane.stack}, from cdk.out`;
    case 'config':
      return 'from the lane config only: the synth refused the lane';
  }
}

/** Rows padded into columns (the last column is not padded). */
function columns(rows: readonly (readonly string[])[]): string[] {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((row) => row[i]?.length ?? 0))) ?? [];
  return rows.map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('  '));
}

/** One summary line: lanes, places, flagged. */
export function summaryLine(map: ResidencyMap): string {
  const places = map.lanes.reduce((n, lane) => n + lane.places.length, 0);
  const flagged = map.lanes.reduce((n, lane) => n + lane.flagged.length, 0);
  const perLane = map.lanes.map((lane) => `${lane.lane} ${lane.flagged.length}`).join(', ');
  const refused = map.lanes.filter((lane) => lane.synthRefusal !== null).map((lane) => lane.lane);
  return `residency: ${map.lanes.length} lane(s), ${places} place(s), ${flagged} flagged (${perLane})${
    refused.length ? `; the synth refused ${refused.join(', ')}` : ''
  }${flagged === 0 ? ": every place is inside its lane's geography" : ''}`;
}

/** The readable map: a table per lane, the flagged places, and the summary line. */
export function formatResidency(map: ResidencyMap): string {
  const out: string[] = [];
  for (const lane of map.lanes) {
    out.push(`lane ${lane.lane}: ${lane.region}, geography ${lane.geography} (${describeSource(lane)})`);
    const rows = [
      ['KIND', 'NAME', 'LOGICAL ID', 'REGION', 'GEO', 'IN LANE', 'ENCRYPTION', 'RETENTION'],
      ...lane.places.map((p) => [
        p.kind,
        p.name,
        p.logicalId ?? '-',
        p.region ?? '-',
        p.geography ?? '?',
        p.inLaneGeography ? 'yes' : 'NO',
        p.encryption,
        p.retention,
      ]),
    ];
    for (const line of columns(rows)) out.push(`  ${line}`);
    if (lane.flagged.length === 0) out.push('  flagged: none');
    for (const flag of lane.flagged) out.push(`  FLAGGED ${flag.kind} ${flag.name}: ${flag.why.replaceAll('\n', '\n    ')}`);
    out.push('');
  }
  out.push(summaryLine(map));
  return `${out.join('\n')}\n`;
}
