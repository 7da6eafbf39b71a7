// The ES module: import { Canopy } from '…/canopy.mjs'. No side effects at import time (no DOM access),
// so it can be imported during server-side rendering.
export { Canopy, loadCanopy, type CanopyOptions } from './canopy.js'
export type { Appearance, AppearanceVariables } from './appearance.js'
export type { Elements, ElementsOptions } from './elements.js'
export type {
  CanopyElement,
  CanopyEventHandler,
  CanopyEventMap,
  CanopyEventName,
  ChangeEvent,
  ChosenAmount,
  CloseEvent,
  ElementType,
  LoadErrorEvent,
  ReadyEvent,
} from './element.js'
export type { LoadErrorDetail, LoadErrorType } from './errors.js'
export type { ElementOptions, RoundUpOptions } from './options.js'
export type { SdkSession, CarbonSession, NatureSession, ImpactPartner, Project } from './session.js'
export { defineCanopyElement } from './dom.js'
export { SDK_VERSION } from './version.js'
