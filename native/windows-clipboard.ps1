# jackin clipboard helper for Windows and WSL. The host runs it as
#   powershell.exe -NoProfile -NonInteractive -Sta -EncodedCommand <"$JackinMode = 'image'|'text'" + this file>
# and reads ONE line of JSON from stdout (see src/host/platform/clipboard/native-contract.ts):
#   {"kind":"file","path":...,"paths":[...]} | {"kind":"image","format":...,"path":...,"types":[...]}
#   {"kind":"text","text":...} | {"kind":"none"} | {"kind":"error","message":...}
# A copied file (Explorer) is reported as its path, never as its thumbnail. A "PNG" clipboard format
# (browsers, Snipping Tool) is written unchanged; only a bare bitmap (which has no original file bytes)
# is encoded as PNG. Images go to a new file under %TEMP%, which the host deletes after reading.
$ErrorActionPreference = 'Stop'
if (-not (Get-Variable -Name JackinMode -ErrorAction SilentlyContinue)) { $JackinMode = 'image' }

function Emit($obj) {
  [Console]::Out.WriteLine(($obj | ConvertTo-Json -Compress -Depth 3))
}

function New-TempImagePath($ext) {
  $name = 'jackin-clip-' + [Guid]::NewGuid().ToString('N') + '.' + $ext
  return [IO.Path]::Combine([IO.Path]::GetTempPath(), $name)
}

try {
  Add-Type -AssemblyName System.Windows.Forms
  Add-Type -AssemblyName System.Drawing
  $data = [Windows.Forms.Clipboard]::GetDataObject()
  if ($null -eq $data) { Emit @{ kind = 'none' }; exit 0 }
  $types = @($data.GetFormats())

  if ([Windows.Forms.Clipboard]::ContainsFileDropList()) {
    $files = [Windows.Forms.Clipboard]::GetFileDropList()
    if ($files.Count -gt 0) { Emit @{ kind = 'file'; path = $files[0]; paths = @($files) }; exit 0 }
  }

  if ($JackinMode -eq 'text') {
    if ([Windows.Forms.Clipboard]::ContainsText()) { Emit @{ kind = 'text'; text = [Windows.Forms.Clipboard]::GetText() } }
    else { Emit @{ kind = 'none' } }
    exit 0
  }

  foreach ($pair in @(@('PNG', 'png'), @('image/png', 'png'), @('JFIF', 'jpeg'), @('image/jpeg', 'jpeg'), @('GIF', 'gif'), @('image/gif', 'gif'))) {
    if ($types -contains $pair[0]) {
      $stream = $data.GetData($pair[0])
      if ($stream -is [IO.MemoryStream] -and $stream.Length -gt 0) {
        $path = New-TempImagePath $pair[1]
        [IO.File]::WriteAllBytes($path, $stream.ToArray())
        Emit @{ kind = 'image'; format = $pair[1]; path = $path; types = $types }
        exit 0
      }
    }
  }

  if ([Windows.Forms.Clipboard]::ContainsImage()) {
    $img = [Windows.Forms.Clipboard]::GetImage()
    $path = New-TempImagePath 'png'
    $img.Save($path, [Drawing.Imaging.ImageFormat]::Png)
    $img.Dispose()
    Emit @{ kind = 'image'; format = 'png'; path = $path; types = $types }
    exit 0
  }
  Emit @{ kind = 'none' }
} catch {
  Emit @{ kind = 'error'; message = $_.Exception.Message }
  exit 0
}
