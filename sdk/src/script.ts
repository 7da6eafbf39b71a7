// The script bundle (<script src="https://canopy.example.com/js/v3/canopy.js">): defines window.Canopy.
// Without apiBase, new Canopy() talks to the deployment the script was loaded from.
import { apiBaseOfScript, Canopy, setDefaultApiBase } from './canopy.js'

const script = document.currentScript
setDefaultApiBase(script instanceof HTMLScriptElement ? apiBaseOfScript(script.src) : undefined)
const global = window as unknown as { Canopy?: unknown }
if (global.Canopy && global.Canopy !== Canopy) console.warn('Canopy: window.Canopy is already defined; the first one loaded is kept')
else global.Canopy = Canopy
