// Maps the tsconfig path aliases (@berth/*) to source files for jest, so tests never need a build.
const path = require('path');
const ts = require('typescript');

function pathsToModuleNameMapper() {
  const file = path.join(__dirname, '..', '..', 'tsconfig.base.json');
  const { config } = ts.readConfigFile(file, ts.sys.readFile);
  const mapper = {};
  for (const [alias, [target]] of Object.entries(config.compilerOptions.paths)) {
    mapper[`^${alias.replace(/[/.]/g, (c) => '\\' + c)}$`] = path.join(__dirname, '..', '..', target);
  }
  return mapper;
}

module.exports = { pathsToModuleNameMapper };
