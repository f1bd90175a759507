// jackin clipboard helper for macOS, run by the host as:
//   osascript -l JavaScript macos-clipboard.js <image|text> <outDir>
// Prints ONE line of JSON on stdout (see src/host/platform/clipboard/native-contract.ts):
//   {"kind":"file","path":...,"paths":[...]} | {"kind":"image","format":...,"path":...,"types":[...]}
//   {"kind":"text","text":...} | {"kind":"none"} | {"kind":"error","message":...}
// A copied file (Finder) is reported as its path, never as the icon image Finder also puts on the
// pasteboard. Image bytes are written unchanged to <outDir> (a private directory the host removes).
ObjC.import('AppKit');
ObjC.import('Foundation');

// Pasteboard UTIs in our order of preference, with the format hint printed for each.
var IMAGE_TYPES = [
  ['public.png', 'png'],
  ['public.jpeg', 'jpeg'],
  ['com.compuserve.gif', 'gif'],
  ['org.webmproject.webp', 'webp'],
  ['public.tiff', 'tiff'],
];

function emit(obj) {
  // console.log in osascript writes to stderr; the host reads stdout.
  var s = $.NSString.alloc.initWithUTF8String(`${JSON.stringify(obj)}\n`);
  $.NSFileHandle.fileHandleWithStandardOutput.writeData(s.dataUsingEncoding($.NSUTF8StringEncoding));
}

function copiedFiles(pb) {
  var opts = $.NSDictionary.dictionaryWithObjectForKey(true, $.NSPasteboardURLReadingFileURLsOnlyKey);
  var urls = pb.readObjectsForClassesOptions($.NSArray.arrayWithObject($.NSURL), opts);
  if (urls.isNil() || urls.count === 0) return null;
  var paths = [];
  for (var i = 0; i < urls.count; i++) paths.push(ObjC.unwrap(urls.objectAtIndex(i).path));
  return paths;
}

// biome-ignore lint/correctness/noUnusedVariables: osascript calls run(argv) with the script's arguments.
function run(argv) {
  try {
    var mode = argv[0] || 'image';
    var outDir = argv[1] || '';
    var pb = $.NSPasteboard.generalPasteboard;
    var types = ObjC.deepUnwrap(pb.types) || [];
    var files = copiedFiles(pb);
    if (files !== null) {
      emit({ kind: 'file', path: files[0], paths: files });
      return;
    }
    if (mode === 'text') {
      var text = pb.stringForType($.NSPasteboardTypeString);
      emit(text.isNil() ? { kind: 'none' } : { kind: 'text', text: ObjC.unwrap(text) });
      return;
    }
    for (var i = 0; i < IMAGE_TYPES.length; i++) {
      var uti = IMAGE_TYPES[i][0];
      if (types.indexOf(uti) < 0) continue;
      var data = pb.dataForType(uti);
      if (data.isNil() || data.length === 0) continue;
      var path = `${outDir}/clipboard.${IMAGE_TYPES[i][1]}`;
      if (!data.writeToFileAtomically(path, false)) {
        emit({ kind: 'error', message: `cannot write the clipboard image to ${path}` });
        return;
      }
      emit({ kind: 'image', format: IMAGE_TYPES[i][1], path: path, types: types });
      return;
    }
    emit({ kind: 'none' });
  } catch (e) {
    emit({ kind: 'error', message: String(e) });
  }
}
