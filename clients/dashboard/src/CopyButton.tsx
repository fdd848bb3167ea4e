import { useState } from 'react';

/**
 * Copies `value` to the clipboard and says so ("Copied"); `label` names what it copies, for the
 * button's text and its accessible name. No clipboard (an http page, a refusal): nothing copied,
 * the value stays selectable beside it.
 */
export function CopyButton({
  value,
  label,
  className,
}: {
  value: string;
  label: string;
  className?: string;
}) {
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      className={className}
      aria-label={copied ? `${label}: copied` : label}
      onClick={async () => {
        try {
          await navigator.clipboard.writeText(value);
          setCopied(true);
        } catch {
          setCopied(false);
        }
      }}
    >
      {copied ? 'Copied' : label}
    </button>
  );
}
