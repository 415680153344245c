// Scenario 10: the walk of one memory hit through the code (lib/walk.mjs): the
// files of src/ it moves between, stepped statement by statement under
// node:inspector, and how often it moves back into a file it has already been in. The
// target is the one-pass issue's: a view hit re-enters fewer than half as many rooms as
// at 74c95bd, where this walk counts 96 re-entries for view JSON (`node bench/walk.mjs
// --base=<checkout of 74c95bd> --routes=view_json`). No clock is read, so quick and
// full runs read the same.
import { walkHit } from '../lib/walk.mjs';
import { meets } from '../lib/report.mjs';

const BEFORE_ONE_PASS = 96;
const TARGET = {
  op: '<=',
  value: Math.ceil(BEFORE_ONE_PASS / 2) - 1,
  formula: `fewer than half of 74c95bd's ${BEFORE_ONE_PASS}`,
};

export async function hitWalk(ctx) {
  const view = walkHit(ctx.root, 'view_json');
  const rawItem = walkHit(ctx.root, 'raw_item');
  ctx.log(
    `  view JSON: ${view.rooms} rooms, ${view.moves} moves, ${view.reentries} re-entries, ${view.steps} steps; raw_item: ${rawItem.rooms}, ${rawItem.moves}, ${rawItem.reentries}, ${rawItem.steps}`,
  );
  const summary = ({ rooms, moves, reentries, steps }) => ({ rooms, moves, reentries, steps });
  return {
    id: 'walk',
    title: '10. The walk of one memory hit: re-entries into a file already left (view JSON)',
    measured: view.reentries,
    unit: 're-entries',
    target: TARGET,
    pass: meets(view.reentries, TARGET),
    display: `${view.reentries} (${view.moves} moves between ${view.rooms} files of src/, ${view.steps} statements; raw_item: ${rawItem.reentries} re-entries, ${rawItem.moves} moves, ${rawItem.rooms} files)`,
    raw: { view_json: summary(view), raw_item: summary(rawItem) },
  };
}
