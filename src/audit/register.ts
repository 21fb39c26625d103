import { composeSection } from './compose-section.js';
import { gitSection } from './git-section.js';
import { hooksSection } from './hooks-section.js';
import { addAuditSection } from './sections.js';

/** The audit sections the landing feature owns: git sharing, hooks, compose bind mounts. */
addAuditSection(gitSection);
addAuditSection(hooksSection);
addAuditSection(composeSection);
